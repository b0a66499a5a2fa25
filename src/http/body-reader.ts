/**
 * Reads a JSON request body under the contract's rules (§1): JSON content type or 415, size limit
 * or 413 (counted while streaming, so a lying or absent Content-Length cannot get past it), valid
 * UTF-8 and JSON or 400, nesting at most 32 levels or 400, no `__proto__`, `constructor` or
 * `prototype` key anywhere or 400.
 */

import { AppError, InvalidError, ValidationFailedError } from '../domain/errors.ts'
import { forbiddenKeys } from '../domain/json-object.ts'
import { readLimited } from '../io/read-limited.ts'

export const MAX_JSON_DEPTH = 32

/** True for `application/json`, with or without parameters such as charset. */
export function isJsonContentType(value: string | null): boolean {
  if (value === null) return false
  return value.split(';', 1)[0]?.trim().toLowerCase() === 'application/json'
}

function tooLarge(limit: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `request body is larger than the limit of ${limit} bytes`, { limit })
}

/** Deepest nesting of objects and arrays in JSON text, stopping early past `max`. */
export function jsonDepthExceeds(text: string, max: number): boolean {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      if (++depth > max) return true
    } else if (c === 125 || c === 93) depth--
  }
  return false
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/** Reads and parses the body (see module comment). */
export async function readJsonBody(request: Request, limit: number): Promise<unknown> {
  if (!isJsonContentType(request.headers.get('content-type'))) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'request body must be JSON: send Content-Type: application/json')
  }
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  const bytes = await readLimited(request.body, limit, () => tooLarge(limit))
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    throw new InvalidError('request body is not valid UTF-8', 'body', 'not valid UTF-8')
  }
  if (text.trim() === '') throw new InvalidError('request body is empty; send a JSON object', 'body', 'required')
  if (jsonDepthExceeds(text, MAX_JSON_DEPTH)) {
    throw new InvalidError(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`, 'body', `nested deeper than ${MAX_JSON_DEPTH} levels`)
  }
  let body: unknown
  try {
    body = JSON.parse(text)
  } catch {
    throw new InvalidError('request body is not valid JSON', 'body', 'not valid JSON')
  }
  const forbidden = forbiddenKeys(body)
  if (forbidden.length > 0) throw new ValidationFailedError(forbidden.slice(0, 1000).map((field) => ({ field, reason: 'this key is not allowed' })))
  return body
}
