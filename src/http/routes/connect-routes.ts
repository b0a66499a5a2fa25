/**
 * flagd's evaluation service over the Connect protocol (docs/openfeature.md#connect): every method
 * of `flagd.evaluation.v1` and `v2` as a `POST /flagd.evaluation.vN.Service/<Method>` route of the
 * one pipeline, so Connect calls get the request id, authentication, CORS, the error table,
 * metrics and the access log like any other request. What OpenFeature's Go flagd provider sends in
 * its default RPC mode (connect-go, binary messages) and the flagd web provider (connect-web,
 * JSON). Unary calls are plain POSTs answered with the message; `EventStream` answers enveloped
 * messages ending in an end-of-stream envelope. The evaluation port's HTTP/1.1 connections reach
 * these routes (and nothing else); the REST port serves them too.
 */

import { MAX_JSON_DEPTH, readBoundedJson } from '../../domain/bounded-json.ts'
import { InvalidError } from '../../domain/errors.ts'
import type { Principal } from '../../domain/principal.ts'
import type { EvaluationRpc, RpcMethod } from '../../sync/evaluation-rpc.ts'
import { secretOf } from '../../sync/secret-of.ts'
import { type ConnectCodec, connectCodecOf, endOfStream, envelope, MAX_RPC_MESSAGE, readConnectMessage } from '../connect-protocol.ts'
import type { RequestContext } from '../request-context.ts'
import { RpcPortRequest } from '../request-context.ts'
import { type RouteSpec, route } from '../route-spec.ts'

/** What the routes need: the service, and whether the REST port takes anonymous calls (config `evaluation.anonymous`). */
export interface ConnectRouteDeps {
  rpc: EvaluationRpc
  anonymous: boolean
}

/** The call's metadata: its headers, as the sync protocol's credential check reads them. */
const metadataOf = (request: Request) => ({
  get(key: string) {
    const value = request.headers.get(key)
    return value === null ? [] : [value]
  },
})

/** The request message, decoded by the codec its content type named. */
function decode(method: RpcMethod, body: { codec: ConnectCodec; bytes: Uint8Array }): object {
  if (body.codec.json) {
    // nesting is checked on the bytes before anything is built (docs/api.md#conventions), as every body is
    const read = readBoundedJson(body.bytes)
    if (!read.ok)
      throw new InvalidError(
        read.problem === 'too-deep'
          ? `the request is not a valid message: JSON nested deeper than ${MAX_JSON_DEPTH} levels`
          : 'the request is not a valid message: not JSON',
      )
    try {
      return method.decodeRequestJson(read.value)
    } catch (err) {
      throw new InvalidError(`the request is not a valid message: ${(err as Error).message}`)
    }
  }
  try {
    return method.decodeRequest(body.bytes)
  } catch (err) {
    throw new InvalidError(`the request is not a valid message: ${(err as Error).message}`)
  }
}

/** A message encoded by the codec. */
const encode = (method: RpcMethod, codec: ConnectCodec, message: object) =>
  codec.json ? new TextEncoder().encode(JSON.stringify(method.encodeResponseJson(message))) : method.encodeResponse(message)

/** An `EventStream` answer: 200, the messages the handler writes, then the end of the stream. */
function streamAnswer(c: RequestContext, method: Extract<RpcMethod, { kind: 'stream' }>, codec: ConnectCodec, request: object) {
  c.keepOpen() // an event stream may be quiet for hours; the client's connection decides
  const listeners: (() => void)[] = []
  let closed = false
  const close = () => {
    if (closed) return
    closed = true
    for (const listener of listeners.splice(0)) listener()
  }
  c.request.signal.addEventListener('abort', close)
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      method.handle(request, c.auth, {
        write: (message) => {
          if (!closed) controller.enqueue(envelope(0, encode(method, codec, message)))
        },
        end: () => {
          if (closed) return
          controller.enqueue(endOfStream())
          controller.close()
          close()
        },
        onClose: (listener) => (closed ? listener() : listeners.push(listener)),
      })
    },
    cancel: close,
  })
  return new Response(body, { status: 200, headers: { 'content-type': codec.contentType, 'x-request-id': c.id } })
}

/** The Connect routes of every method (see module comment). */
export function connectRoutes(deps: ConnectRouteDeps): RouteSpec[] {
  const caller = (c: RequestContext): Principal | Promise<Principal> => {
    const anonymousAllowed = c.request instanceof RpcPortRequest ? c.request.anonymousAllowed : deps.anonymous
    return deps.rpc.principalOf(secretOf(metadataOf(c.request), { providerId: '', selector: '' }), anonymousAllowed)
  }
  return [...deps.rpc.methods.values()].map((method) => {
    const streaming = method.kind === 'stream'
    return route({
      method: 'POST',
      path: method.path,
      authenticate: caller,
      connect: { streaming },
      body: {
        limit: MAX_RPC_MESSAGE,
        read: async (request, limit) => {
          const codec = connectCodecOf(request, streaming)
          return { codec, bytes: await readConnectMessage(request, codec, limit) }
        },
      },
      handle(c) {
        const body = c.body as { codec: ConnectCodec; bytes: Uint8Array }
        const request = decode(method, body)
        if (method.kind === 'stream') return streamAnswer(c, method, body.codec, request)
        const answer = method.handle(request, c.auth)
        return new Response(encode(method, body.codec, answer), {
          status: 200,
          headers: { 'content-type': body.codec.contentType, 'x-request-id': c.id },
        })
      },
    })
  })
}
