/**
 * A test app served the way the listener serves it (`http.serving()`: Bun's router with a compiled
 * handler per route, Elysia's router for whatever Bun's does not match), on 127.0.0.1 and a port
 * the kernel picks. Requests that reach Elysia's router are counted, so a test can tell which
 * router found a route.
 */

import type { Server } from 'bun'
import type { TestApp } from './test-app.ts'

/** The served app: its address and how many requests Bun's router passed on. */
export interface ServedApp {
  server: Server<undefined>
  /** `http://127.0.0.1:<port>` */
  base: string
  fallbackCalls(): number
  stop(): Promise<void>
}

/** Serves `t` on 127.0.0.1. */
export function serveApp(t: TestApp): ServedApp {
  const { routes, fetch, attach } = t.app.http.serving()
  let calls = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    development: false,
    routes,
    fetch(request) {
      calls++
      return fetch(request)
    },
  })
  attach(server)
  return { server, base: `http://127.0.0.1:${server.port}`, fallbackCalls: () => calls, stop: () => server.stop(true) }
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
