/**
 * The HTTP listener's lifecycle: Bun.serve with the contract's limits, and a graceful stop that
 * finishes in-flight requests without waiting on idle keep-alive connections.
 */

import type { Server } from 'bun'
import type { Config } from '../config.ts'
import { AppError } from '../domain/errors.ts'
import { errorResponse } from './error-handler.ts'
import type { HttpApp } from './server.ts'

/** A listening server. */
export interface Listener {
  server: Server<undefined>
  /** Stops accepting, waits for in-flight requests (at most `graceMs`), then closes idle connections. */
  stop(graceMs: number): Promise<void>
}

/** Starts listening; bodies above twice the largest limit are cut by Bun itself. */
export function listen(config: Config, http: HttpApp): Listener {
  let inFlight = 0
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    development: false,
    maxRequestBodySize: Math.max(config.limits.bodyBytes, config.limits.importBytes) * 2,
    async fetch(request, srv) {
      inFlight++
      try {
        return await http.handle(request, srv.requestIP(request)?.address ?? 'unknown')
      } finally {
        inFlight--
      }
    },
    error: () => errorResponse(new AppError('INTERNAL', 'internal error')),
  })
  return {
    server,
    async stop(graceMs) {
      const stopped = server.stop(false) // stop accepting; keep-alive sockets may linger
      const deadline = Date.now() + graceMs
      while (inFlight > 0 && Date.now() < deadline) await Bun.sleep(10)
      await server.stop(true)
      await stopped
    },
  }
}
