/**
 * What both gRPC listeners (the sync protocol, the evaluation service) do alike: bind a server to an
 * address, and stop servers gracefully, cutting what has not ended within two seconds.
 */

import { type Server, ServerCredentials } from '@grpc/grpc-js'

/** Binds `server` to `address` (`host:port` or `unix:path`); answers the port. */
export function bindServer(server: Server, address: string): Promise<number> {
  return new Promise<number>((resolve, reject) =>
    server.bindAsync(address, ServerCredentials.createInsecure(), (err, port) => (err ? reject(err) : resolve(port))),
  )
}

/** The `host:port` address of a TCP listener (IPv6 hosts in brackets). */
export const tcpAddress = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`

/** Stops `servers`: a graceful shutdown, forced after two seconds. */
export async function shutDownServers(servers: readonly Server[]): Promise<void> {
  await Promise.all(
    servers.map(
      (server) =>
        new Promise<void>((resolve) => {
          const force = setTimeout(() => {
            server.forceShutdown()
            resolve()
          }, 2000)
          server.tryShutdown(() => {
            clearTimeout(force)
            resolve()
          })
        }),
    ),
  )
}
