/**
 * One gRPC call over an HTTP/2 stream (the gRPC over HTTP/2 specification): the request's one
 * length-prefixed message (identity or gzip), the method's handler, and the answer as HEADERS,
 * the message and trailers with the status, or a trailers-only answer for an error.
 */

import { status } from '@grpc/grpc-js'
import type { GrpcFailure, GrpcMetadata, GrpcMethod, GrpcWriter } from './grpc-method.ts'
import { headerBlock } from './header-block.ts'
import type { Http2Stream } from './http2-stream.ts'
import { envelope, onlyMessage } from './message-envelope.ts'

/** The largest request message (gRPC's default limit). */
export const MAX_MESSAGE = 4 * 1024 * 1024
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

/** The one message of a request body. */
function messageOf(stream: Http2Stream): Uint8Array {
  if (stream.overflowed) throw { code: status.RESOURCE_EXHAUSTED, details: `a request over ${MAX_MESSAGE} octets` }
  return onlyMessage(stream.body(), stream.headers.get('grpc-encoding') ?? null)
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

/** Answers one gRPC request stream with `methods`. */
export function serveGrpcCall(methods: ReadonlyMap<string, GrpcMethod>, stream: Http2Stream): void {
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
      if (!stream.closed) stream.answer(RESPONSE, envelope(0, method.encode(answer)), OK)
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
        stream.send(envelope(0, method.encode(message)))
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
