/**
 * Reads a JSON request body under the rules of docs/api.md#conventions: JSON content type or 415, no content
 * coding (a gzip body would otherwise fail as "not valid UTF-8", and a mislabelled plain one pass) or 415, size limit
 * or 413 (counted while streaming, so a lying or absent Content-Length cannot get past it), valid
 * UTF-8 and JSON or 400, nesting at most 32 levels or 400 (measured on the bytes before a value is
 * built), no `__proto__`, `constructor` or `prototype` key anywhere or 400.
 */

import { MAX_JSON_DEPTH, readBoundedJson } from '../domain/bounded-json.ts'
import { AppError, InvalidError, ValidationFailedError } from '../domain/errors.ts'
import { forbiddenKeys, mayHoldForbiddenKeys } from '../domain/json-object.ts'
import { readLimited } from '../io/read-limited.ts'

/** True for `application/json`, with or without parameters such as charset. */
export function isJsonContentType(value: string | null): boolean {
  if (value === null) return false
  return value.split(';', 1)[0]?.trim().toLowerCase() === 'application/json'
}

/**
 * The content coding a request body declares other than `identity` (`gzip`, say), or `undefined`.
 * flagd takes bodies uncompressed only (RFC 9110 §8.4: such a body is refused, not guessed at).
 */
export function contentCodingOf(headers: Headers): string | undefined {
  const value = headers.get('content-encoding')
  if (value === null) return undefined
  const codings = value
    .split(',')
    .map((c) => c.trim().toLowerCase())
    .filter((c) => c !== '' && c !== 'identity')
  return codings.length === 0 ? undefined : codings.join(', ')
}

function tooLarge(limit: number): AppError {
  return new AppError('PAYLOAD_TOO_LARGE', `request body is larger than the limit of ${limit} bytes`, { limit })
}

/**
 * A smaller limit for a route whose valid bodies are always small (login): a body over `bytes` is
 * answered with `error()` at once, from its declared length when it has one, without reading it.
 */
export interface SmallBodyLimit {
  bytes: number
  error: () => AppError
}

/**
 * Reads a body that should be small without keeping more than `small.bytes` of it: past that, the
 * rest is only counted, so a streamed body over `limit` is still `413`, and any other oversized
 * body gets `small.error()`; memory stays bounded either way.
 */
async function readSmall(stream: ReadableStream<Uint8Array> | null, small: SmallBodyLimit, limit: number): Promise<Uint8Array> {
  let overflow = false
  let total = 0
  const kept = await readLimited(
    stream === null
      ? null
      : stream.pipeThrough(
          new TransformStream<Uint8Array, Uint8Array>({
            transform(chunk, controller) {
              total += chunk.byteLength
              if (total > limit) controller.error(tooLarge(limit))
              else if (total > small.bytes) overflow = true
              else controller.enqueue(chunk)
            },
          }),
        ),
    small.bytes,
    small.error,
  )
  if (overflow) throw small.error()
  return kept
}

const bodyProblem = {
  'too-deep': () =>
    new InvalidError(`request body is nested deeper than ${MAX_JSON_DEPTH} levels`, 'body', `nested deeper than ${MAX_JSON_DEPTH} levels`),
  'not-utf8': () => new InvalidError('request body is not valid UTF-8', 'body', 'not valid UTF-8'),
  empty: () => new InvalidError('request body is empty; send a JSON object', 'body', 'required'),
  'not-json': () => new InvalidError('request body is not valid JSON', 'body', 'not valid JSON'),
}

/** Reads and parses the body (see module comment). */
export async function readJsonBody(request: Request, limit: number, small?: SmallBodyLimit): Promise<unknown> {
  if (!isJsonContentType(request.headers.get('content-type'))) {
    throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'request body must be JSON: send Content-Type: application/json')
  }
  const coding = contentCodingOf(request.headers)
  if (coding !== undefined) {
    await request.body?.cancel().catch(() => {})
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `request body must not be compressed (Content-Encoding: ${coding}): send the JSON as it is`,
      {
        field: 'Content-Encoding',
        reason: 'only identity is accepted',
      },
    )
  }
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  if (small && declared !== null && Number(declared) > small.bytes) {
    await request.body?.cancel().catch(() => {})
    throw small.error()
  }
  const bytes =
    small && small.bytes < limit
      ? await readSmall(request.body, small, limit)
      : await readLimited(request.body, limit, () => tooLarge(limit))
  const read = readBoundedJson(bytes)
  if (!read.ok) throw bodyProblem[read.problem]()
  const body = read.value
  // a large body is walked only when its text could hold a forbidden key
  const forbidden = mayHoldForbiddenKeys(read.text) ? forbiddenKeys(body) : []
  if (forbidden.length > 0)
    throw new ValidationFailedError(forbidden.slice(0, 1000).map((field) => ({ field, reason: 'this key is not allowed' })))
  return body
}

/**
 * A body that may be left out (an action whose fields are all optional: `POST …/approve`): none
 * at all is `undefined`; one that is sent is read as `readJsonBody` reads it.
 */
export async function readOptionalJsonBody(request: Request, limit: number): Promise<unknown> {
  const declared = request.headers.get('content-length')
  if (declared === '0' || (declared === null && request.body === null)) return undefined
  return readJsonBody(request, limit)
}
