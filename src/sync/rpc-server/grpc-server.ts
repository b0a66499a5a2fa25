/**
 * The evaluation service's listener (docs/openfeature.md#rpc) on Bun's own sockets: gRPC calls
 * over this folder's HTTP/2 connection (grpc-call.ts), at a fraction of the CPU `@grpc/grpc-js`
 * spends on Bun's `node:http2` for the same call (docs/performance.md), and the Connect protocol
 * for HTTP/1.1 connections on the same port (connect-protocol.ts); pings that find vanished peers,
 * and a graceful close.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Socket } from 'bun'
import { connectHandler } from './connect-protocol.ts'
import { MAX_MESSAGE, serveGrpcCall } from './grpc-call.ts'
import type { GrpcMethod } from './grpc-method.ts'
import { type Bridge, openBridge } from './http1-bridge.ts'
import { Http2Connection } from './http2-connection.ts'
import { SocketSink } from './socket-sink.ts'

export type { GrpcFailure, GrpcMetadata, GrpcMethod, GrpcWriter } from './grpc-method.ts'

/** A running listener. */
export interface GrpcListener {
  /** The TCP port (the one chosen, when 0 was asked); undefined on a unix socket. */
  readonly port: number | undefined
  /** GOAWAY to every client, then the sockets close once their calls end (two seconds at most). */
  close(): Promise<void>
}

type Connection = { h2: Http2Connection; sink: SocketSink; bridge?: Bridge }

/** How a listener treats its clients. */
export interface ListenOptions {
  /** Web origins allowed to make Connect calls (`cors.origins`). */
  corsOrigins?: readonly string[]
  /** How often each HTTP/2 connection is pinged (one that missed the last ping is closed). */
  keepaliveMs?: number
  /** How long a new connection may take to show its protocol before it is closed. */
  firstBytesSeconds?: number
}

/**
 * Serves `methods` (keyed by path, `/package.Service/Method`) at `where`: gRPC over HTTP/2, and
 * the Connect protocol over HTTP/1.1 (connections told apart by their first octets; HTTP/1.1 ones
 * go to a private Bun.serve on a unix socket in a directory of their own).
 */
export function listenGrpc(
  where: { hostname: string; port: number } | { unix: string },
  methods: ReadonlyMap<string, GrpcMethod>,
  options: ListenOptions = {},
): GrpcListener {
  const { corsOrigins = [], keepaliveMs = 60_000, firstBytesSeconds = 10 } = options
  const connections = new Set<Connection>()
  const http1Dir = mkdtempSync(join(tmpdir(), 'flagd-connect-'))
  const http1Path = join(http1Dir, 'http1.sock')
  const connect = connectHandler(methods, MAX_MESSAGE, corsOrigins)
  const http1 = Bun.serve({
    unix: http1Path,
    fetch(req, server) {
      server.timeout(req, 0) // an event stream may be quiet for hours; the client's connection decides
      return connect(req)
    },
    maxRequestBodySize: MAX_MESSAGE + 1024,
  })
  const socket = {
    open(s: Socket<Connection>) {
      const sink = new SocketSink(s as Socket<unknown>)
      const state: Connection = {
        sink,
        h2: new Http2Connection(
          sink,
          (stream) => serveGrpcCall(methods, stream),
          MAX_MESSAGE,
          (first) => {
            state.bridge = openBridge(sink, first, http1Path)
          },
        ),
      }
      s.data = state
      connections.add(state)
      // a connection that never says what it speaks holds a socket for nothing
      s.timeout(firstBytesSeconds)
      // the kernel probes idle TCP peers (60 s): an HTTP/1.1 event stream has no ping of its own
      s.setKeepAlive(true, 60_000)
    },
    data(s: Socket<Connection>, chunk: Uint8Array) {
      if (s.data.bridge) s.data.bridge.send(chunk)
      else {
        s.data.h2.receive(chunk)
        if (s.data.bridge !== undefined || s.data.h2.speaksHttp2) s.timeout(0)
      }
    },
    timeout(s: Socket<Connection>) {
      s.data.sink.end()
    },
    drain(s: Socket<Connection>) {
      s.data.sink.drain()
    },
    close(s: Socket<Connection>) {
      s.data.h2.socketClosed()
      s.data.bridge?.close()
      connections.delete(s.data)
    },
    error(s: Socket<Connection>) {
      s.data?.h2.socketClosed()
      s.data?.bridge?.close()
    },
  }
  const address = 'unix' in where ? where.unix : `${where.hostname}:${where.port}`
  let listener: Bun.TCPSocketListener<Connection> | Bun.UnixSocketListener<Connection>
  try {
    listener = 'unix' in where ? Bun.listen<Connection>({ unix: where.unix, socket }) : Bun.listen<Connection>({ ...where, socket })
  } catch (err) {
    http1.stop(true)
    rmSync(http1Dir, { recursive: true, force: true })
    // Bun's message names the host but not the port: say which address could not be had
    throw new Error(`cannot listen on ${address} (${(err as { code?: string }).code ?? (err as Error).message})`)
  }
  // a client that stops answering pings is gone (a provider's machine lost, say): its streams end
  const keepalive = setInterval(() => {
    for (const c of connections) if (!c.h2.ping()) c.sink.end()
  }, keepaliveMs)
  keepalive.unref()
  return {
    port: 'port' in listener ? listener.port : undefined,
    async close() {
      clearInterval(keepalive)
      listener.stop(false)
      for (const c of connections) c.h2.goAway()
      const until = performance.now() + 2000
      while ([...connections].some((c) => c.h2.openStreams > 0) && performance.now() < until) await Bun.sleep(10)
      for (const c of connections) c.sink.end()
      listener.stop(true)
      await http1.stop(true)
      rmSync(http1Dir, { recursive: true, force: true })
    },
  }
}
