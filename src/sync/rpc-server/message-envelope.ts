/**
 * The length-prefixed message both protocols of the evaluation port frame messages in (gRPC's
 * "Length-Prefixed-Message", Connect's envelope): one octet of flags (1: compressed; Connect's 2:
 * end of stream), four of length, the message.
 */

import { status } from '@grpc/grpc-js'
import { gunzipSync } from 'bun'

/** `payload` framed with `flags`. */
export function envelope(flags: number, payload: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + payload.length)
  const n = payload.length
  out[0] = flags
  out[1] = n >>> 24
  out[2] = (n >>> 16) & 0xff
  out[3] = (n >>> 8) & 0xff
  out[4] = n & 0xff
  out.set(payload, 5)
  return out
}

/**
 * The one message a request body holds, uncompressed; `encoding` is the compression the request
 * names (`grpc-encoding`, `connect-content-encoding`). Throws the gRPC failure a client's mistake is.
 */
export function onlyMessage(body: Uint8Array, encoding: string | null): Uint8Array {
  if (body.length < 5) throw { code: status.INVALID_ARGUMENT, details: 'the request holds no message' }
  const length = (((body[1] as number) << 24) | ((body[2] as number) << 16) | ((body[3] as number) << 8) | (body[4] as number)) >>> 0
  if (body.length !== 5 + length) throw { code: status.INVALID_ARGUMENT, details: 'the request must hold exactly one message' }
  const message = body.subarray(5)
  if (((body[0] as number) & 1) === 0) return message
  if (encoding !== 'gzip')
    throw { code: status.UNIMPLEMENTED, details: `message encoding "${encoding ?? 'identity'}" is not supported (identity, gzip)` }
  return gunzipSync(new Uint8Array(message))
}
