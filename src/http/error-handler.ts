/**
 * The one place that turns errors into HTTP answers: AppError kinds map to statuses through one
 * table, schema failures (body, query) are translated into the same envelope, evaluation problems
 * on OFREP's routes get OFREP's error body, and anything else is a bug: logged with the request id,
 * answered with a generic 500.
 */

import { ValueErrorType } from '@sinclair/typebox/errors'
import { AppError, type ErrorCode, type FieldProblem, NotFoundError } from '../domain/errors.ts'
import { closestSpelling, unknownFieldReason } from '../domain/spelling-suggestion.ts'
import { EvaluationFailed } from '../services/flag-evaluator.ts'

/** Status of every error code (docs/api.md#conventions). */
export const STATUS_OF: Record<ErrorCode, number> = {
  INVALID_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  CHANGE_REQUEST_REQUIRED: 409,
  PRECONDITION_FAILED: 412,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED_MEDIA_TYPE: 415,
  TOO_MANY_REQUESTS: 429,
  INTERNAL: 500,
  UPSTREAM_ERROR: 502,
  UNAVAILABLE: 503,
}

/** gRPC's status codes by name (the numbers grpc-js and every gRPC implementation use). */
export const GRPC_CODE = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const

/** The gRPC status of every error code, for the evaluation port's gRPC and Connect calls alike (docs/openfeature.md#rpc). */
export const GRPC_STATUS_OF: Record<ErrorCode, number> = {
  INVALID_REQUEST: GRPC_CODE.INVALID_ARGUMENT,
  UNAUTHORIZED: GRPC_CODE.UNAUTHENTICATED,
  FORBIDDEN: GRPC_CODE.PERMISSION_DENIED,
  NOT_FOUND: GRPC_CODE.NOT_FOUND,
  METHOD_NOT_ALLOWED: GRPC_CODE.UNIMPLEMENTED,
  CONFLICT: GRPC_CODE.ABORTED,
  CHANGE_REQUEST_REQUIRED: GRPC_CODE.FAILED_PRECONDITION,
  PRECONDITION_FAILED: GRPC_CODE.FAILED_PRECONDITION,
  PAYLOAD_TOO_LARGE: GRPC_CODE.RESOURCE_EXHAUSTED,
  UNSUPPORTED_MEDIA_TYPE: GRPC_CODE.UNIMPLEMENTED,
  TOO_MANY_REQUESTS: GRPC_CODE.RESOURCE_EXHAUSTED,
  INTERNAL: GRPC_CODE.INTERNAL,
  UPSTREAM_ERROR: GRPC_CODE.UNAVAILABLE,
  UNAVAILABLE: GRPC_CODE.UNAVAILABLE,
}

/** A gRPC status and its message. */
export interface GrpcStatus {
  code: number
  details: string
}

/**
 * The gRPC status of anything an RPC handler threw: an AppError through the table, a rule that
 * cannot decide `UNKNOWN` (flagd's `GENERAL`); anything else is a bug, reported by `logError` and
 * answered `INTERNAL` without its message.
 */
export function grpcStatusOf(err: unknown, logError: (err: unknown) => void): GrpcStatus {
  if (err instanceof AppError) return { code: GRPC_STATUS_OF[err.code], details: err.message }
  if (err instanceof EvaluationFailed) return { code: GRPC_CODE.UNKNOWN, details: err.message }
  logError(err)
  return { code: GRPC_CODE.INTERNAL, details: 'internal error' }
}

/** The wire shape of every error. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> }
}

/** Headers every JSON answer carries besides the common ones. */
export const JSON_TYPE = 'application/json; charset=utf-8'

/** A method the path does not support: `405` with `Allow` naming the ones it does. */
export class MethodNotAllowedError extends AppError {
  constructor(
    method: string,
    path: string,
    readonly allow: readonly string[],
  ) {
    super('METHOD_NOT_ALLOWED', `${method} is not allowed on ${path}; use ${allow.join(', ')}`)
  }
}

/**
 * The answer to an AppError, with the headers every answer carries: the status from the table, the
 * envelope, and the headers some codes need (`WWW-Authenticate`, `Retry-After`, `Accept-Encoding`).
 */
export function errorAnswer(err: AppError, requestId: string, extraHeaders?: Record<string, string>): Response {
  const body: ErrorBody = { error: { code: err.code, message: err.message } }
  if (err.details !== undefined) body.error.details = err.details
  const headers: Record<string, string> = {
    'content-type': JSON_TYPE,
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
    'x-request-id': requestId,
    ...extraHeaders,
  }
  if (err.code === 'UNAUTHORIZED') headers['www-authenticate'] = 'Bearer'
  if (err.code === 'TOO_MANY_REQUESTS' && typeof err.details?.retryAfter === 'number')
    headers['retry-after'] = String(err.details.retryAfter)
  // a body refused for its content coding says which one is accepted (RFC 9110 §12.5.3)
  if (err.code === 'UNSUPPORTED_MEDIA_TYPE' && err.details?.field === 'Content-Encoding') headers['accept-encoding'] = 'identity'
  if (err instanceof MethodNotAllowedError) headers.allow = err.allow.join(', ')
  return new Response(JSON.stringify(body), { status: STATUS_OF[err.code], headers })
}

/** An OFREP error code (the ones flagd can give). */
export type OfrepErrorCode = 'PARSE_ERROR' | 'INVALID_CONTEXT' | 'FLAG_NOT_FOUND' | 'GENERAL'

/** A problem of an OFREP request, answered with OFREP's error body (docs/openfeature.md#ofrep). */
export class OfrepProblem extends Error {
  constructor(
    readonly status: number,
    readonly errorCode: OfrepErrorCode,
    readonly errorDetails: string,
  ) {
    super(errorDetails)
  }
}

/**
 * On OFREP's routes, the answer to an evaluation problem in OFREP's shape `{key?, errorCode,
 * errorDetails}`: a problem of the request, a flag the caller cannot see (`FLAG_NOT_FOUND`), a rule
 * that cannot decide (`GENERAL`, so the SDK serves the application's default). Anything else
 * (credentials, permissions, a body over the limit) keeps the envelope: `undefined`.
 */
export function ofrepErrorAnswer(err: unknown, requestId: string, key?: string): Response | undefined {
  const problem =
    err instanceof OfrepProblem
      ? err
      : err instanceof NotFoundError && key !== undefined
        ? new OfrepProblem(404, 'FLAG_NOT_FOUND', err.message)
        : err instanceof EvaluationFailed
          ? new OfrepProblem(400, 'GENERAL', err.details)
          : undefined
  if (problem === undefined) return undefined
  const body = JSON.stringify({ ...(key === undefined ? {} : { key }), errorCode: problem.errorCode, errorDetails: problem.errorDetails })
  return new Response(body, {
    status: problem.status,
    headers: { 'content-type': JSON_TYPE, 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-request-id': requestId },
  })
}

/**
 * The answer to anything a handler threw: an `AppError` as it says; anything else is a bug, logged
 * with the request id (never shown to the client) and answered `500`.
 */
export function thrownAnswer(err: unknown, requestId: string, logError: (requestId: string, err: unknown) => void): Response {
  if (err instanceof AppError) return errorAnswer(err, requestId)
  logError(requestId, err)
  return errorAnswer(new AppError('INTERNAL', 'internal error; the request id identifies it in the log'), requestId)
}

interface TypeBoxError {
  type: number
  path: string
  message: string
  schema?: { enum?: unknown[] } | { properties?: object } | object
}

function reasonFor(e: TypeBoxError, where: string): string {
  switch (e.type) {
    case ValueErrorType.ObjectRequiredProperty:
      return 'required'
    case ValueErrorType.ObjectAdditionalProperties: {
      // the field it probably meant, from the object's own schema (docs/api.md#conventions)
      const known = e.schema && 'properties' in e.schema && e.schema.properties ? Object.keys(e.schema.properties) : []
      return unknownFieldReason(e.path.split('/').pop() ?? '', known, where === 'query' ? 'unknown query parameter' : 'unknown field')
    }
    case ValueErrorType.String:
      return 'must be a string'
    case ValueErrorType.Boolean:
      return 'must be true or false'
    case ValueErrorType.Integer:
      return 'must be an integer'
    case ValueErrorType.Number:
      return 'must be a number'
    case ValueErrorType.Array:
      return 'must be an array'
    case ValueErrorType.Object:
      return 'must be a JSON object'
    case ValueErrorType.ArrayUniqueItems:
      return 'must not contain duplicates'
    case ValueErrorType.Literal:
    case ValueErrorType.Union: {
      if (e.schema && 'enum' in e.schema && Array.isArray(e.schema.enum)) return `must be one of ${e.schema.enum.join(', ')}`
      // a query parameter's integer or boolean (a typed branch beside its string form on the wire)
      const branches =
        e.schema && 'anyOf' in e.schema && Array.isArray(e.schema.anyOf) ? (e.schema.anyOf as { type?: string; const?: unknown }[]) : []
      // a choice of names (`?format=`, `?mode=`): list them, so the caller can pick (docs/api.md#conventions)
      if (branches.length > 0 && branches.every((b) => typeof b.const === 'string'))
        return `must be one of ${branches.map((b) => b.const).join(', ')}`
      if (branches.some((b) => b.type === 'integer')) return 'must be an integer'
      if (branches.some((b) => b.type === 'boolean')) return 'must be true or false'
      return 'has an invalid value'
    }
    default:
      return e.message.charAt(0).toLowerCase() + e.message.slice(1)
  }
}

const parentOf = (path: string) => path.slice(0, path.lastIndexOf('/'))
const lastOf = (path: string) => path.slice(path.lastIndexOf('/') + 1)

/** The unknown field of the same object that is a near spelling of the missing one `missing` names. */
function typoOf(missing: TypeBoxError, all: readonly TypeBoxError[]): TypeBoxError | undefined {
  const name = lastOf(missing.path)
  return all.find(
    (e) =>
      e.type === ValueErrorType.ObjectAdditionalProperties &&
      parentOf(e.path) === parentOf(missing.path) &&
      closestSpelling(lastOf(e.path), [name]) === name,
  )
}

/** Translates a TypeBox validation failure into the API's `{field, reason}` (docs/api.md#errors). */
export function validationProblem(all: readonly TypeBoxError[], where: string): FieldProblem {
  const first = all[0]
  if (!first) return { field: where, reason: 'is invalid' }
  // a required field missing beside an unknown one spelt like it ({"tpye": …}): name the typo
  if (first.type === ValueErrorType.ObjectRequiredProperty) {
    const typo = typoOf(first, all)
    if (typo) return validationProblem([typo], where)
  }
  const field = first.path.split('/').filter(Boolean).join('.') || (where === 'body' ? 'body' : where)
  return { field, reason: reasonFor(first, where) }
}

/** The message for a field problem, phrased as a sentence. */
export function problemMessage(p: FieldProblem): string {
  if (p.reason === 'required') return `${p.field} is required`
  if (p.reason.startsWith('unknown')) {
    const [what, suggestion] = p.reason.split('; ', 2)
    return `${what} "${p.field}"${suggestion ? `; ${suggestion}` : ''}`
  }
  if (p.field === 'body') return `request body ${p.reason}`
  return `${p.field} ${p.reason}`
}
