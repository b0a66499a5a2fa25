/**
 * The request side of OFREP (docs/openfeature.md#ofrep), which follows the OpenFeature protocol rather than docs/api.md#conventions:
 * the body is `{"context": {...}}`, where an empty body (whatever its content type), `{}`, and a
 * missing or `null` context all mean an empty context; unknown fields are ignored; a problem gets
 * OFREP's own error body `{key?, errorCode, errorDetails}` instead of the error envelope (docs/api.md#conventions).
 */

import { MAX_JSON_DEPTH, readBoundedJson } from '../domain/bounded-json.ts'
import { AppError } from '../domain/errors.ts'
import type { EvaluationContext } from '../domain/evaluation.ts'
import { forbiddenKeys, isJsonObject, nestingExceeds } from '../domain/json-object.ts'
import { readLimited } from '../io/read-limited.ts'
import { contentCodingOf } from './body-reader.ts'
import { OfrepProblem } from './error-handler.ts'

/** The largest evaluation context, serialized (docs/targeting.md#rules). */
export const MAX_CONTEXT_BYTES = 64 * 1024
/** The deepest evaluation context (docs/targeting.md#rules). */
export const MAX_CONTEXT_DEPTH = 16

const tooLarge = (limit: number) => new AppError('PAYLOAD_TOO_LARGE', `request body is larger than the limit of ${limit} bytes`, { limit })

/**
 * Why an evaluation context (an object) cannot be used, or `undefined`. `bodyText`, when given, is
 * the request body it came from: a body within the size limit holds a context within it, which
 * spares serializing the context again on the evaluation path.
 */
export function contextProblem(context: Record<string, unknown>, bodyText?: string): string | undefined {
  // rules walk the context: its size and depth are bounded (docs/targeting.md#rules)
  if (bodyText === undefined || bodyText.length * 3 > MAX_CONTEXT_BYTES) {
    const size = Buffer.byteLength(JSON.stringify(context))
    if (size > MAX_CONTEXT_BYTES) return `the context is ${size} bytes of JSON; at most ${MAX_CONTEXT_BYTES} are allowed`
  }
  if (nestingExceeds(context, MAX_CONTEXT_DEPTH)) return `the context is nested deeper than ${MAX_CONTEXT_DEPTH} levels`
  const forbidden = forbiddenKeys(context)
  if (forbidden.length > 0) return `context may not hold the key at ${forbidden[0]}`
  // OFREP: the targeting key is a string; another type is the caller's mistake, not "no key"
  const key = context.targetingKey
  if (key !== undefined && typeof key !== 'string')
    return `context.targetingKey must be a string, not ${key === null ? 'null' : Array.isArray(key) ? 'an array' : typeof key}`
  return undefined
}

const ofrepProblem = {
  'too-deep': `the body is nested deeper than ${MAX_JSON_DEPTH} levels`,
  'not-utf8': 'the body is not valid UTF-8',
  'not-json': 'the body is not valid JSON',
}

/** Reads the evaluation context of an OFREP request (see module comment), as the pipeline's body step of OFREP's routes. Over `limit`: 413 (docs/api.md#conventions). */
export async function readEvaluationContext(request: Request, limit: number): Promise<EvaluationContext> {
  const declared = request.headers.get('content-length')
  if (declared === '0' || (declared === null && request.body === null)) return {}
  if (declared !== null && Number(declared) > limit) throw tooLarge(limit)
  const coding = contentCodingOf(request.headers)
  if (coding !== undefined)
    throw new OfrepProblem(400, 'PARSE_ERROR', `the body must not be compressed (Content-Encoding: ${coding}); send the JSON as it is`)
  // with a declared length Bun has the body already and holds it to that length; otherwise count
  const bytes =
    declared !== null ? new Uint8Array(await request.arrayBuffer()) : await readLimited(request.body, limit, () => tooLarge(limit))
  // any JSON body, OFREP's too, is refused past 32 levels before it is parsed (docs/api.md#conventions), ignored fields included
  const read = readBoundedJson(bytes)
  if (!read.ok) {
    if (read.problem === 'empty') return {}
    throw new OfrepProblem(400, 'PARSE_ERROR', ofrepProblem[read.problem])
  }
  const { value: body, text } = read
  if (!isJsonObject(body)) throw new OfrepProblem(400, 'INVALID_CONTEXT', 'the body must be a JSON object: {"context": {...}}')
  const context = body.context
  if (context === undefined || context === null) return {}
  if (!isJsonObject(context)) throw new OfrepProblem(400, 'INVALID_CONTEXT', 'context must be a JSON object')
  const why = contextProblem(context, text)
  if (why) throw new OfrepProblem(400, 'INVALID_CONTEXT', why)
  return context
}
