/**
 * The Connect protocol's wire rules (connectrpc.com/docs/protocol) for the Connect routes of the
 * evaluation service (docs/openfeature.md#connect): the content types, the envelope server streams
 * frame messages in, a request's one message read within the limit after decompression (inflating
 * stops at the limit, so a small gzip bomb costs nothing), and errors in Connect's shape, their
 * code from the one table of gRPC statuses (error-handler.ts).
 */

import { gunzipSync } from 'node:zlib'
import { AppError, InvalidError } from '../domain/errors.ts'
import { readLimited } from '../io/read-limited.ts'
import { GRPC_CODE, grpcStatusOf, JSON_TYPE } from './error-handler.ts'

/** The largest request message of a Connect call, after decompression (docs/openfeature.md#rpc). */
export const MAX_RPC_MESSAGE = 4 * 1024 * 1024

/** Connect's code names by gRPC code (the protocol's table). */
const NAMES = [
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
/** The HTTP status of a unary call's error, by gRPC code (the protocol's table). */
const STATUSES = [200, 499, 500, 400, 504, 404, 409, 403, 429, 400, 409, 400, 501, 500, 503, 500, 401]

/** How a Connect call's messages travel: its content type says whether it streams and which codec it uses. */
export interface ConnectCodec {
  streaming: boolean
  json: boolean
  contentType: string
}

/** The codec a request's content type names for a unary or a streaming method; throws 415 naming what is taken. */
export function connectCodecOf(request: Request, streaming: boolean): ConnectCodec {
  const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
  const prefix = streaming ? 'application/connect+' : 'application/'
  if (type === `${prefix}proto` || type === `${prefix}json`) return { streaming, json: type.endsWith('json'), contentType: type }
  const why = type.startsWith('application/grpc') ? 'gRPC needs HTTP/2' : `content type "${type}" is not one of this method's`
  throw new AppError('UNSUPPORTED_MEDIA_TYPE', `${why}: a Connect call is a POST of ${prefix}proto or ${prefix}json`, {
    field: 'Content-Type',
  })
}

/** `payload` framed with `flags` (0: a message, 2: the end of a stream). */
export function envelope(flags: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.length)
  new DataView(out.buffer).setUint32(1, payload.length)
  out[0] = flags
  out.set(payload, 5)
  return out
}

const tooLarge = (limit: number) => new AppError('PAYLOAD_TOO_LARGE', `a request message over ${limit} octets`, { limit })

/** `bytes` inflated, never past `limit` octets (the inflater stops there); a coding other than gzip is a `415`. */
export function inflated(bytes: Uint8Array, encoding: string, limit: number): Uint8Array {
  if (encoding !== 'gzip')
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', `message encoding "${encoding}" is not supported (identity, gzip)`, {
      field: 'Content-Encoding',
    })
  try {
    return gunzipSync(bytes, { maxOutputLength: limit })
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) throw tooLarge(limit)
    throw new InvalidError('the request message is not valid gzip')
  }
}

/**
 * The request's one message, uncompressed, at most `limit` octets before and after decompression:
 * a unary body is the message (`Content-Encoding`), a stream's body one enveloped message
 * (`Connect-Content-Encoding`).
 */
export async function readConnectMessage(request: Request, codec: ConnectCodec, limit: number): Promise<Uint8Array> {
  const body = await readLimited(request.body, limit + 5, () => tooLarge(limit))
  if (!codec.streaming) {
    const encoding = request.headers.get('content-encoding')
    return encoding === null || encoding === 'identity' ? body : inflated(body, encoding, limit)
  }
  if (body.length < 5) throw new InvalidError('the request holds no message')
  const length = new DataView(body.buffer, body.byteOffset).getUint32(1)
  if (body.length !== 5 + length) throw new InvalidError('the request must hold exactly one message')
  const message = body.subarray(5)
  if (((body[0] as number) & 1) === 0) return message
  return inflated(message, request.headers.get('connect-content-encoding') ?? 'identity', limit)
}

/** An error as Connect's JSON (`{code, message}`). */
const errorJson = (code: number, message: string) => ({ code: NAMES[code] ?? 'unknown', message })

/** The end of a stream, with an error or none, enveloped. */
export const endOfStream = (error?: { code: number; details: string }) =>
  envelope(2, new TextEncoder().encode(JSON.stringify(error ? { error: errorJson(error.code, error.details) } : {})))

/**
 * A Connect call's error answer: a unary call's as the code's HTTP status and Connect's JSON, a
 * stream's as `200` and an end-of-stream envelope carrying it. A request that is no Connect call of
 * the route (its content type, its method) keeps the API's envelope: `undefined`.
 */
export function connectErrorAnswer(
  err: unknown,
  request: Request,
  requestId: string,
  streaming: boolean,
  logError: (requestId: string, err: unknown) => void,
): Response | undefined {
  if (err instanceof AppError && (err.code === 'METHOD_NOT_ALLOWED' || err.details?.field === 'Content-Type')) return undefined
  const status = grpcStatusOf(err, (e) => logError(requestId, e))
  const headers = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-request-id': requestId }
  if (streaming) {
    const type = request.headers.get('content-type')?.includes('json') ? 'application/connect+json' : 'application/connect+proto'
    return new Response(endOfStream(status), { status: 200, headers: { ...headers, 'content-type': type } })
  }
  return new Response(JSON.stringify(errorJson(status.code, status.details)), {
    status: STATUSES[status.code] ?? 500,
    headers: { ...headers, 'content-type': JSON_TYPE },
  })
}

/** The status of a call the server ended without error (Connect's `ok`). */
export const CONNECT_OK = GRPC_CODE.OK
