/**
 * The HTTP listener's lifecycle: Bun.serve with the limits of docs/api.md#conventions, and a graceful stop that
 * finishes in-flight requests without waiting on idle keep-alive connections.
 */

import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import type { Server } from 'bun'
import type { Config } from '../config.ts'
import { AppError } from '../domain/errors.ts'
import { errorAnswer } from './error-handler.ts'
import type { HttpApp } from './server.ts'

/** A listening server. */
export interface Listener {
  server: Server<undefined>
  /** Stops accepting, waits for in-flight requests (at most `graceMs`), then closes idle connections. */
  stop(graceMs: number): Promise<void>
}

/** Why an address cannot be listened on, as a sentence naming it (docs/operations.md: never bare errno text). */
export function listenFailure(host: string, port: number, err: unknown): Error {
  const where = `cannot listen on ${host.includes(':') ? `[${host}]` : host}:${port}`
  const code = (err as NodeJS.ErrnoException)?.code
  const why: Record<string, string> = {
    EADDRINUSE: 'the address is already in use by another process (another flagd?); stop it or choose another --port',
    EADDRNOTAVAIL: `${host} is not an address of this machine, nor a name that resolves to one; check --host`,
    EINVAL: `${host} is not a valid address or host name; check --host`,
    EACCES: `this user may not listen on port ${port} (ports below 1024 need privileges); choose a port above 1023`,
  }
  return new Error(`${where}: ${(code && why[code]) ?? (err as Error)?.message ?? String(err)}`)
}

/**
 * Checks `host` before listening: an IP address, or a name this machine resolves. Bun's own error
 * for a bad host depends on the port (EINVAL, or EADDRINUSE with port 0), so it cannot name the
 * cause; this can.
 */
export async function checkListenHost(host: string, port: number): Promise<void> {
  if (isIP(host)) return
  const bad = (why: string) => new Error(`cannot listen on ${host}:${port}: ${host} ${why}; check --host (or host in the config)`)
  if (/^[\d.]+$/.test(host)) throw bad('is not a valid address or host name')
  try {
    await lookup(host)
  } catch {
    throw bad('is not a name this machine can resolve')
  }
}

/** Starts listening; bodies above twice the largest limit are cut by Bun itself. */
export function listen(config: Config, http: HttpApp): Listener {
  let server: Server<undefined>
  try {
    server = serve(config, http)
  } catch (err) {
    throw listenFailure(config.host, config.port, err)
  }
  return {
    server,
    async stop(graceMs) {
      const stopped = server.stop(false) // stop accepting; keep-alive sockets may linger
      const deadline = performance.now() + graceMs
      // Bun counts the requests being answered; no wrapper of our own on every request
      while (server.pendingRequests > 0 && performance.now() < deadline) await Bun.sleep(10)
      await server.stop(true)
      await stopped
    },
  }
}

function serve(config: Config, http: HttpApp): Server<undefined> {
  const server = Bun.serve({
    hostname: config.host,
    port: config.port,
    // Bun turns SO_REUSEPORT on by default outside development mode, which let a second daemon
    // share the port and split requests between two data stores. One daemon per port, always.
    reusePort: false,
    development: false,
    maxRequestBodySize: Math.max(config.limits.bodyBytes, config.limits.importBytes) * 2,
    fetch: http.fetch,
    // only a bug in the pipeline itself gets here (it answers every error of a route)
    error: () => errorAnswer(new AppError('INTERNAL', 'internal error'), 'unknown'),
  })
  http.attach(server)
  return server
}
