/**
 * A gRPC server for unary and server-streaming methods on Bun's own sockets and this folder's
 * HTTP/2 connection (docs/openfeature.md#rpc): the evaluation service answers every provider call
 * here, at a fraction of the CPU `@grpc/grpc-js` spends on Bun's `node:http2` for the same call
 * (docs/performance.md). gRPC over HTTP/2 as the protocol defines it: one length-prefixed message
 * each way (identity or gzip), status and message in trailers, a trailers-only answer for errors.
 * HTTP/1.1 connections on the same port get the Connect protocol (connect-protocol.ts).
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { status } from '@grpc/grpc-js'
import { gunzipSync, type Socket } from 'bun'
import { connectHandler } from './connect-protocol.ts'
import { headerBlock } from './header-block.ts'
import { type Bridge, openBridge } from './http1-bridge.ts'
import { Http2Connection } from './http2-connection.ts'
import type { Http2Stream } from './http2-stream.ts'
import { SocketSink } from './socket-sink.ts'

/** The metadata of a call, as grpc-js's `Metadata.get` answers it (values of one key). */
export interface GrpcMetadata {
  get(key: string): string[]
}

/** A status a handler ends a call with: grpc-js's error shape (`code`, `details`). */
export interface GrpcFailure {
  code: number
  details?: string
  message?: string
}

/** The server's side of a server-streaming call. */
export interface GrpcWriter {
  write(message: object): void
  /** Ends the call with OK. */
  end(): void
  /** Ends the call with a status. */
  fail(failure: GrpcFailure): void
  /** Calls `listener` once when the call is over, ended here or by the client. */
  onClose(listener: () => void): void
}

/** One method: its messages' codecs (binary, and JSON for the Connect protocol's JSON codec) and its handler. */
export type GrpcMethod = {
  decode(bytes: Uint8Array): object
  encode(message: object): Uint8Array
  decodeJson?(json: unknown): object
  encodeJson?(message: object): unknown
} & (
  | { kind: 'unary'; handle(request: object, metadata: GrpcMetadata): object | Promise<object> }
  | { kind: 'stream'; handle(request: object, metadata: GrpcMetadata, call: GrpcWriter): void }
)

/** A running listener. */
export interface GrpcListener {
  /** The TCP port (the one chosen, when 0 was asked); undefined on a unix socket. */
  readonly port: number | undefined
  /** GOAWAY to every client, then the sockets close once their calls end (two seconds at most). */
  close(): Promise<void>
}

const MAX_MESSAGE = 4 * 1024 * 1024
const RESPONSE = headerBlock([
  [':status', '200'],
  ['content-type', 'application/grpc'],
])
const OK = headerBlock([['grpc-status', '0']])

// grpc-message is percent-encoded outside printable ASCII (the gRPC over HTTP/2 specification)
const encodeMessage = (text: string) =>
  Array.from(Buffer.from(text, 'utf8'), (b) =>
    b < 0x20 || b > 0x7e || b === 0x25 ? `%${b.toString(16).toUpperCase().padStart(2, '0')}` : String.fromCharCode(b),
  ).join('')

const statusBlock = (failure: GrpcFailure, trailersOnly: boolean) =>
  headerBlock([
    ...(trailersOnly
      ? ([
          [':status', '200'],
          ['content-type', 'application/grpc'],
        ] as const)
      : []),
    ['grpc-status', String(failure.code)],
    ['grpc-message', encodeMessage(failure.details ?? failure.message ?? '')],
  ])

/** A length-prefixed message (uncompressed). */
function framed(message: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + message.length)
  const n = message.length
  out[1] = n >>> 24
  out[2] = (n >>> 16) & 0xff
  out[3] = (n >>> 8) & 0xff
  out[4] = n & 0xff
  out.set(message, 5)
  return out
}

/** The one message of a request body. */
function messageOf(stream: Http2Stream): Uint8Array {
  if (stream.overflowed) throw { code: status.RESOURCE_EXHAUSTED, details: `a request over ${MAX_MESSAGE} octets` }
  const body = stream.body()
  if (body.length < 5) throw { code: status.INVALID_ARGUMENT, details: 'the request holds no message' }
  const length = (((body[1] as number) << 24) | ((body[2] as number) << 16) | ((body[3] as number) << 8) | (body[4] as number)) >>> 0
  if (body.length !== 5 + length) throw { code: status.INVALID_ARGUMENT, details: 'the request must hold exactly one message' }
  const message = body.subarray(5)
  if (body[0] === 0) return message
  const encoding = stream.headers.get('grpc-encoding') ?? 'identity'
  if (encoding !== 'gzip') throw { code: status.UNIMPLEMENTED, details: `message encoding "${encoding}" is not supported (identity, gzip)` }
  return gunzipSync(new Uint8Array(message))
}

/** The call's metadata: its headers without HTTP/2's pseudo-headers. */
const metadataOf = (stream: Http2Stream): GrpcMetadata => ({
  get(key) {
    const value = key.startsWith(':') ? undefined : stream.headers.get(key.toLowerCase())
    return value === undefined ? [] : [value]
  },
})

const failureOf = (err: unknown): GrpcFailure =>
  typeof (err as GrpcFailure)?.code === 'number'
    ? (err as GrpcFailure)
    : { code: status.INTERNAL, details: String((err as Error)?.message ?? err) }

/** Ends `stream` with `err`'s status: in trailers after an answer began, trailers-only before. */
function fail(stream: Http2Stream, err: unknown): void {
  const failure = failureOf(err)
  if (stream.responded) stream.end(statusBlock(failure, false))
  else stream.respond(statusBlock(failure, true), true)
}

/** Answers one request stream. */
function serve(methods: ReadonlyMap<string, GrpcMethod>, stream: Http2Stream): void {
  const contentType = stream.headers.get('content-type') ?? ''
  if (stream.headers.get(':method') !== 'POST' || !contentType.startsWith('application/grpc')) {
    stream.respond(headerBlock([[':status', '415']]), true)
    return
  }
  const path = stream.headers.get(':path') ?? ''
  const method = methods.get(path)
  if (method === undefined) {
    fail(stream, { code: status.UNIMPLEMENTED, details: `no method ${path} here` })
    return
  }
  let request: object
  try {
    request = method.decode(messageOf(stream))
  } catch (err) {
    const refusal = typeof (err as GrpcFailure)?.code === 'number'
    fail(
      stream,
      refusal ? err : { code: status.INVALID_ARGUMENT, details: `the request is not a ${path} message: ${(err as Error).message}` },
    )
    return
  }
  const metadata = metadataOf(stream)
  if (method.kind === 'unary') {
    const reply = (answer: object) => {
      if (!stream.closed) stream.answer(RESPONSE, framed(method.encode(answer)), OK)
    }
    try {
      const answer = method.handle(request, metadata)
      if (answer instanceof Promise) answer.then(reply).catch((err) => fail(stream, err))
      else reply(answer)
    } catch (err) {
      fail(stream, err)
    }
    return
  }
  stream.respond(RESPONSE)
  const writer: GrpcWriter = {
    write: (message) => {
      try {
        stream.send(framed(method.encode(message)))
      } catch (err) {
        fail(stream, err) // a message that cannot be encoded ends this call, not its caller's loop
      }
    },
    end: () => stream.end(OK),
    fail: (failure) => fail(stream, failure),
    onClose: (listener) => stream.onClose(listener),
  }
  try {
    method.handle(request, metadata, writer)
  } catch (err) {
    fail(stream, err)
  }
}

type Connection = { h2: Http2Connection; sink: SocketSink; bridge?: Bridge }

/**
 * Serves `methods` (keyed by path, `/package.Service/Method`) at `where`: gRPC over HTTP/2, and
 * the Connect protocol over HTTP/1.1 (connections told apart by their first octets; HTTP/1.1 ones
 * go to a private Bun.serve on a unix socket in a directory of their own).
 */
export function listenGrpc(
  where: { hostname: string; port: number } | { unix: string },
  methods: ReadonlyMap<string, GrpcMethod>,
  keepaliveMs = 60_000,
): GrpcListener {
  const connections = new Set<Connection>()
  const http1Dir = mkdtempSync(join(tmpdir(), 'flagd-connect-'))
  const http1Path = join(http1Dir, 'http1.sock')
  const connect = connectHandler(methods, MAX_MESSAGE)
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
          (stream) => serve(methods, stream),
          MAX_MESSAGE,
          (first) => {
            state.bridge = openBridge(sink, first, http1Path)
          },
        ),
      }
      s.data = state
      connections.add(state)
    },
    data(s: Socket<Connection>, chunk: Uint8Array) {
      if (s.data.bridge) s.data.bridge.send(chunk)
      else s.data.h2.receive(chunk)
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
      const until = Date.now() + 2000
      while ([...connections].some((c) => c.h2.openStreams > 0) && Date.now() < until) await Bun.sleep(10)
      for (const c of connections) c.sink.end()
      listener.stop(true)
      await http1.stop(true)
      rmSync(http1Dir, { recursive: true, force: true })
    },
  }
}
