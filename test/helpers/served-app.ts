/**
 * A test app served the way the listener serves it (the app's `fetch` in Bun.serve, attached to its
 * server), on 127.0.0.1 and a port the kernel picks: for what only a socket shows (client
 * addresses, connection timeouts, compression on the wire, real clients).
 */

import type { Server } from 'bun'
import { createEvaluationRpc } from '../../src/sync/evaluation-rpc.ts'
import { type EvaluationRpcServer, startEvaluationServer } from '../../src/sync/evaluation-server.ts'
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
 * Asks `base`'s /health over and over while `requests` run: their answers, and how many health
 * answers (each a 200) came back before the last of them finished. A service that held its event
 * loop for the whole of the work answers /health at most once meanwhile; one that takes turns, many
 * times. A count, not a duration: how long it took is the bench's (docs/development.md#time).
 */
export async function healthWhile<T>(base: string, requests: Promise<T>[]): Promise<{ answers: T[]; healthAnswers: number }> {
  let healthAnswers = 0
  let done = false
  const all = Promise.all(requests).then((r) => {
    done = true
    return r
  })
  do {
    const res = await fetch(`${base}/health`)
    if (res.status !== 200) throw new Error(`/health answered ${res.status}`)
    if (!done) healthAnswers++
  } while (!done)
  return { answers: await all, healthAnswers }
}

/**
 * flagd's evaluation port for `t` (anonymous callers allowed), on 127.0.0.1 and a port the kernel
 * picks, its HTTP/1.1 calls answered by `t`'s app as the daemon's are; close it when done. `t` must be
 * made with `FLAGD_EVALUATION_PORT` set, so that its app has the Connect routes.
 */
export async function serveEvaluation(t: TestApp): Promise<EvaluationRpcServer> {
  const { services } = t.app
  return startEvaluationServer(
    createEvaluationRpc({
      evaluations: services.evaluations,
      sync: services.sync,
      changeFeed: services.changeFeed,
      defaultEnvironment: t.app.config.environment,
    }),
    { port: 0, host: '127.0.0.1', socket: undefined, anonymous: true },
    (request) => t.app.http.handle(request),
    () => {},
  )
}
