/**
 * A test app served the way the listener serves it (the app's `fetch` in Bun.serve, attached to its
 * server), on 127.0.0.1 and a port the kernel picks: for what only a socket shows (client
 * addresses, connection timeouts, compression on the wire, real clients).
 */

import type { Server } from 'bun'
import type { TestApp } from './test-app.ts'

/** The served app and its address. */
export interface ServedApp {
  server: Server<undefined>
  /** `http://127.0.0.1:<port>` */
  base: string
  stop(): Promise<void>
}

/** Serves `t` on 127.0.0.1. */
export function serveApp(t: TestApp): ServedApp {
  const http = t.app.http
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, development: false, fetch: http.fetch })
  http.attach(server)
  return { server, base: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}

/**
 * Asks `base`'s /health over and over while `requests` run: their answers, and the slowest health
 * answer (how long the service kept others waiting).
 */
export async function healthWhile<T>(base: string, requests: Promise<T>[]): Promise<{ answers: T[]; worst: number }> {
  let worst = 0
  let done = false
  const all = Promise.all(requests).then((r) => {
    done = true
    return r
  })
  while (!done) {
    const started = performance.now()
    const res = await fetch(`${base}/health`)
    if (res.status !== 200) throw new Error(`/health answered ${res.status}`)
    worst = Math.max(worst, performance.now() - started)
  }
  return { answers: await all, worst }
}
