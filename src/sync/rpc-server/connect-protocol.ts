/**
 * The Connect protocol (connectrpc.com/docs/protocol) for the evaluation service's methods, over
 * HTTP/1.1: what OpenFeature's Go flagd provider speaks in its default RPC mode (connect-go with
 * binary messages) and the flagd web provider too (connect-web with JSON), as OpenFeature's flagd
 * serves it beside gRPC on one port. Unary calls are plain POSTs (`application/proto` or
 * `application/json`, the message as the body, errors as an HTTP status and a JSON body); server
 * streams are enveloped messages (`application/connect+proto|json`) ending in an end-of-stream
 * envelope that carries the status. The methods and their handlers are the gRPC server's.
 */

import { randomUUID } from 'node:crypto'
import { gunzipSync } from 'bun'
import { type CorsVocabulary, createCors } from '../../http/cors.ts'
import type { GrpcFailure, GrpcMetadata, GrpcMethod, GrpcWriter } from './grpc-method.ts'
import { envelope, onlyMessage } from './message-envelope.ts'

/** Connect's code names and HTTP statuses, by gRPC code (the protocol's table). */
const CODES = [
  'ok',
  'canceled',
  'unknown',
  'invalid_argument',
  'deadline_exceeded',
  'not_found',
  'already_exists',
  'permission_denied',
  'resource_exhausted',
  'failed_precondition',
  'aborted',
  'out_of_range',
  'unimplemented',
  'internal',
  'unavailable',
  'data_loss',
  'unauthenticated',
]
const STATUSES = [200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401]

const failureOf = (err: unknown): GrpcFailure =>
  typeof (err as GrpcFailure)?.code === 'number' ? (err as GrpcFailure) : { code: 13, details: String((err as Error)?.message ?? err) }
const errorJson = (f: GrpcFailure) => ({ code: CODES[f.code] ?? 'unknown', message: f.details ?? f.message ?? '' })

/** A unary error: the code's HTTP status, the error as JSON. */
const unaryError = (failure: GrpcFailure) =>
  Response.json(errorJson(failure), { status: STATUSES[failure.code] ?? 500, headers: { 'content-type': 'application/json' } })

/** Not a Connect request: a sentence saying what this port speaks. */
const notConnect = (status: number, why: string) =>
  new Response(
    `${why}. This port serves flagd's evaluation service: gRPC over HTTP/2 (prior knowledge), or the Connect protocol over HTTP/1.1 (POST, application/proto or application/json).\n`,
    { status, headers: { 'content-type': 'text/plain; charset=utf-8' } },
  )

/** The request's metadata: its headers. */
const metadataOf = (req: Request): GrpcMetadata => ({
  get(key) {
    const value = req.headers.get(key)
    return value === null ? [] : [value]
  },
})

/** The request message of `body`, decoded as the content type says; throws a failure. */
function decodeRequest(method: GrpcMethod, body: Uint8Array, json: boolean): object {
  try {
    return json ? (method.decodeJson as (j: unknown) => object)(JSON.parse(new TextDecoder().decode(body))) : method.decode(body)
  } catch (err) {
    throw { code: 3, details: `the request is not a valid message: ${(err as Error).message}` } satisfies GrpcFailure
  }
}

/** What a Connect client sends and reads (its headers), for CORS. */
const CONNECT_CORS: CorsVocabulary = {
  methods: 'POST',
  allowHeaders:
    'Authorization, Content-Type, Connect-Protocol-Version, Connect-Timeout-Ms, Connect-Content-Encoding, Connect-Accept-Encoding, Content-Encoding, Accept-Encoding, X-User-Agent',
  exposeHeaders: 'Content-Encoding, Connect-Content-Encoding',
}

/**
 * Answers Connect requests for `methods` (keyed by path), messages up to `maxMessage` octets; web
 * pages of `corsOrigins` (`*` for any) may call them, through the CORS that OFREP's routes use.
 */
export function connectHandler(
  methods: ReadonlyMap<string, GrpcMethod>,
  maxMessage: number,
  corsOrigins: readonly string[] = [],
): (req: Request) => Promise<Response> {
  const cors = createCors(corsOrigins, CONNECT_CORS)
  const answer = call(methods, maxMessage)
  return async (req) => {
    const preflight = cors?.preflight(req, randomUUID())
    if (preflight !== undefined) return preflight
    const res = await answer(req)
    cors?.decorate(req, res)
    return res
  }
}

/** The Connect calls themselves. */
function call(methods: ReadonlyMap<string, GrpcMethod>, maxMessage: number): (req: Request) => Promise<Response> {
  return async (req) => {
    const path = new URL(req.url).pathname
    const type = (req.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
    if (req.method !== 'POST') return notConnect(405, `${req.method} ${path} is not a call`)
    if (type.startsWith('application/grpc')) return notConnect(415, 'gRPC needs HTTP/2')
    const method = methods.get(path)
    if (method === undefined) return unaryError({ code: 12, details: `no method ${path} here` })
    const streaming = method.kind === 'stream'
    const json = type === (streaming ? 'application/connect+json' : 'application/json')
    if (!json && type !== (streaming ? 'application/connect+proto' : 'application/proto'))
      return notConnect(415, `content type "${type}" is not one of this method's`)
    if (json && method.decodeJson === undefined) return notConnect(415, 'this method has no JSON codec')
    const encode = (message: object) =>
      json ? new TextEncoder().encode(JSON.stringify(method.encodeJson?.(message))) : method.encode(message)
    const answerType = { 'content-type': type }

    let body = new Uint8Array(await req.arrayBuffer())
    if (!streaming) {
      try {
        if (body.length > maxMessage) throw { code: 8, details: `a request over ${maxMessage} octets` }
        if (req.headers.get('content-encoding') === 'gzip') body = gunzipSync(body)
        const request = decodeRequest(method, body, json)
        const answer = await (method as Extract<GrpcMethod, { kind: 'unary' }>).handle(request, metadataOf(req))
        return new Response(encode(answer), { status: 200, headers: answerType })
      } catch (err) {
        return unaryError(failureOf(err))
      }
    }

    // a server stream: always 200, its status in the end-of-stream envelope
    const listeners: (() => void)[] = []
    let closed = false
    const close = () => {
      if (closed) return
      closed = true
      for (const listener of listeners.splice(0)) listener()
    }
    req.signal.addEventListener('abort', close)
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        const finish = (end: object) => {
          if (closed) return
          controller.enqueue(envelope(2, new TextEncoder().encode(JSON.stringify(end))))
          controller.close()
          close()
        }
        const writer: GrpcWriter = {
          write: (message) => {
            if (!closed) controller.enqueue(envelope(0, encode(message)))
          },
          end: () => finish({}),
          fail: (failure) => finish({ error: errorJson(failure) }),
          onClose: (listener) => (closed ? listener() : listeners.push(listener)),
        }
        try {
          if (body.length > maxMessage) throw { code: 8, details: `a request over ${maxMessage} octets` }
          const request = decodeRequest(method, onlyMessage(body, req.headers.get('connect-content-encoding')), json)
          ;(method as Extract<GrpcMethod, { kind: 'stream' }>).handle(request, metadataOf(req), writer)
        } catch (err) {
          writer.fail(failureOf(err))
        }
      },
      cancel: close,
    })
    return new Response(stream, { status: 200, headers: answerType })
  }
}
