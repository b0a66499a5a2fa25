/**
 * A test app served the way the listener serves it: Bun's router sends the fast lanes' routes to
 * them and everything else, or whatever a lane hands on, to the full pipeline, whose calls are
 * counted so a test can tell which of the two answered.
 */

import type { Server } from 'bun'
import type { Lane } from '../../src/http/fast-lane.ts'
import type { TestApp } from './test-app.ts'

/** The served app: its address and how often the full pipeline answered. */
export interface LaneServer {
  server: Server<undefined>
  /** `http://127.0.0.1:<port>` */
  base: string
  fullCalls(): number
  stop(): Promise<void>
}

/** Serves `t` on 127.0.0.1 (a free port). */
export function serveWithLanes(t: TestApp): LaneServer {
  const http = t.app.http
  let calls = 0
  const full: Lane = (request) => {
    calls++
    return http.handle(request, '127.0.0.1')
  }
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, development: false, routes: http.fastLanes(full), fetch: full })
  return { server, base: `http://127.0.0.1:${server.port}`, fullCalls: () => calls, stop: () => server.stop(true) }
}
