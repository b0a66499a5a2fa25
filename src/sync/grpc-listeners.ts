/**
 * What both gRPC listeners (the sync protocol, the evaluation service) do alike
 * (docs/architecture.md#grpc): `@grpc/grpc-js` servers made with the same explicit limits, behind a
 * front listener of ours that caps connections, closes a connection that does not say what it
 * speaks, and hands HTTP/2 connections to grpc-js (its connection injector) and HTTP/1.1 ones to
 * the caller (the evaluation port's Connect routes) or a plain 400; and a graceful stop that cuts
 * what has not ended within two seconds. The front reads no more than a connection's first octets.
 */

import { chmodSync, rmSync } from 'node:fs'
import { createServer, type Socket } from 'node:net'
import { type Server, ServerCredentials } from '@grpc/grpc-js'

/** The largest request message a gRPC server takes (after decompression; grpc-js stops inflating there). */
export const MAX_GRPC_MESSAGE = 4 * 1024 * 1024

/**
 * The explicit limits of every gRPC server (docs/decisions/0005-grpc-stack.md says why each): the
 * defaults leave a session's memory unbounded.
 */
export const GRPC_SERVER_OPTIONS = {
  /** Megabytes an HTTP/2 session may hold (unread output, header tables) before new streams are refused. */
  'grpc-node.max_session_memory': 10,
  'grpc.max_concurrent_streams': 100,
  'grpc.max_receive_message_length': MAX_GRPC_MESSAGE,
  /** A connection is pinged after a minute of quiet and closed when the answer takes 20 s. */
  'grpc.keepalive_time_ms': 60_000,
  'grpc.keepalive_timeout_ms': 20_000,
  /** A connection without calls for five minutes is closed (providers reconnect on demand). */
  'grpc.max_connection_idle_ms': 300_000,
  /** No channelz bookkeeping per call (nothing here reads it; it costs CPU on every call). */
  'grpc.enable_channelz': 0,
} as const

/** How the front treats connections. */
export interface FrontOptions {
  /** Connections open at once; the next is closed at once. */
  maxConnections?: number
  /** Connections open at once from one address. */
  maxConnectionsPerAddress?: number
  /** How long a new connection may take to send its first octets. */
  firstBytesMs?: number
  /** Takes an HTTP/1.1 connection (its first octets are put back); none: a plain 400. */
  http1?: (socket: Socket) => void
}

/** A listening front. */
export interface GrpcFront {
  /** The TCP port (the one chosen, when 0 was asked); undefined on a unix socket. */
  readonly port: number | undefined
  /** Closes the connection of a call's peer (grpc-js's `getPeer()`); false when none is open. */
  closePeer(peer: string): boolean
  /** Stops accepting; with `force`, also closes every connection it handed on. */
  close(force: boolean): Promise<void>
}

const PRI = Buffer.from('PRI ')
const NOT_GRPC =
  'HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain; charset=utf-8\r\nconnection: close\r\ncontent-length: 65\r\n\r\nThis port speaks gRPC over HTTP/2 only (prior knowledge, no TLS).\n'

/** grpc-js's name of a connection's peer. */
const peerOf = (socket: Socket) =>
  socket.remoteAddress === undefined
    ? 'unknown'
    : `${socket.remoteAddress.includes(':') ? `[${socket.remoteAddress}]` : socket.remoteAddress}:${socket.remotePort}`

/** Listens at `where` (`{host, port}` or a unix socket path, made 0660) for `server` (see module comment). */
export function listenGrpc(server: Server, where: { host: string; port: number } | { socket: string }, options: FrontOptions = {}) {
  const { maxConnections = 1000, maxConnectionsPerAddress = maxConnections, firstBytesMs = 10_000, http1 } = options
  const injector = server.createConnectionInjector(ServerCredentials.createInsecure())
  const sockets = new Map<string, Socket>()
  const perAddress = new Map<string, number>()

  const front = createServer((socket) => {
    const address = socket.remoteAddress ?? 'unix'
    const fromAddress = perAddress.get(address) ?? 0
    if (sockets.size >= maxConnections || fromAddress >= maxConnectionsPerAddress) return void socket.destroy()
    const peer = peerOf(socket)
    sockets.set(peer, socket)
    perAddress.set(address, fromAddress + 1)
    socket.once('close', () => {
      sockets.delete(peer)
      const left = (perAddress.get(address) ?? 1) - 1
      if (left === 0) perAddress.delete(address)
      else perAddress.set(address, left)
    })
    socket.on('error', () => socket.destroy())
    // a connection that never says what it speaks holds a socket for nothing
    socket.setTimeout(firstBytesMs, () => socket.destroy())
    let seen = Buffer.alloc(0)
    const onData = (chunk: Buffer) => {
      seen = Buffer.concat([seen, chunk])
      if (seen.length < PRI.length && PRI.subarray(0, seen.length).equals(seen)) return
      socket.off('data', onData)
      socket.pause()
      socket.setTimeout(0)
      socket.unshift(seen)
      if (seen.subarray(0, PRI.length).equals(PRI)) injector.injectConnection(socket)
      else if (http1 !== undefined) http1(socket)
      else socket.end(NOT_GRPC)
      socket.resume()
    }
    socket.on('data', onData)
  })

  return new Promise<GrpcFront>((resolve, reject) => {
    front.once('error', (err: NodeJS.ErrnoException) => {
      const address = 'socket' in where ? where.socket : tcpAddress(where.host, where.port)
      reject(new Error(`cannot listen on ${address} (${err.code ?? err.message})`))
    })
    const listening = () => {
      front.removeAllListeners('error')
      front.on('error', () => {})
      if ('socket' in where) chmodSync(where.socket, 0o660)
      const bound = front.address()
      resolve({
        port: typeof bound === 'object' && bound !== null ? bound.port : undefined,
        closePeer(peer) {
          const socket = sockets.get(peer)
          socket?.destroy()
          return socket !== undefined
        },
        async close(force) {
          // stop accepting at once (the server's own callback would wait for every connection to end)
          if (front.listening) front.close()
          if ('socket' in where) rmSync(where.socket, { force: true })
          if (!force) return
          injector.destroy()
          for (const socket of sockets.values()) socket.destroy()
        },
      })
    }
    if ('socket' in where) {
      rmSync(where.socket, { force: true }) // a socket file left by an earlier run
      front.listen(where.socket, listening)
    } else front.listen(where.port, where.host, listening)
  })
}

/** The `host:port` address of a TCP listener (IPv6 hosts in brackets). */
export const tcpAddress = (host: string, port: number) => `${host.includes(':') ? `[${host}]` : host}:${port}`

/** Stops `servers` and their fronts: a graceful shutdown, forced after two seconds. */
export async function shutDownServers(servers: readonly Server[], fronts: readonly GrpcFront[]): Promise<void> {
  await Promise.all(fronts.map((f) => f.close(false)))
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
  await Promise.all(fronts.map((f) => f.close(true).catch(() => {})))
}
