/**
 * Error kinds of the domain and services. They carry a stable code, a sentence a person can act on,
 * and safe details; they know nothing of HTTP. `src/http/error-handler.ts` is the one place that maps
 * a kind to a status.
 */

/** Stable, machine-readable error codes (the contract's `error.code`). */
export const ERROR_CODES = [
  'INVALID_REQUEST',
  'UNAUTHORIZED',
  'FORBIDDEN',
  'NOT_FOUND',
  'METHOD_NOT_ALLOWED',
  'CONFLICT',
  'CHANGE_REQUEST_REQUIRED',
  'PRECONDITION_FAILED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'TOO_MANY_REQUESTS',
  'UPSTREAM_ERROR',
  'UNAVAILABLE',
  'INTERNAL',
] as const

/** One error code. */
export type ErrorCode = (typeof ERROR_CODES)[number]

/** One problem with one field, as reported in `details` or `details.errors`. */
export interface FieldProblem {
  field: string
  reason: string
}

/** Base of every expected failure; anything else reaching the edge is a bug. */
export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message)
    this.name = 'AppError'
  }
}

/** The input broke a rule; `field` names where (dotted path), `reason` says why. */
export class InvalidError extends AppError {
  constructor(message: string, field?: string, reason?: string) {
    super('INVALID_REQUEST', message, field === undefined ? undefined : { field, reason: reason ?? message })
  }
}

function summarize(problems: FieldProblem[]): string {
  const shown = problems.slice(0, 3).map((p) => `${p.field}: ${p.reason}`)
  if (problems.length === 1) return shown[0] as string
  const more = problems.length > 3 ? ` (and ${problems.length - 3} more)` : ''
  return `${problems.length} problems: ${shown.join('; ')}${more}`
}

/** At most this many problems are listed in `details.errors`; `details.errorCount` gives the total. */
export const MAX_LISTED_PROBLEMS = 1000

/** Several input problems reported at once (import documents, flag definitions). */
export class ValidationFailedError extends AppError {
  constructor(
    readonly problems: FieldProblem[],
    message?: string,
  ) {
    const first = problems[0]
    const errors = problems.slice(0, MAX_LISTED_PROBLEMS)
    super('INVALID_REQUEST', message ?? summarize(problems), {
      ...(first ? { field: first.field, reason: first.reason } : {}),
      errors,
      errorCount: problems.length,
    })
  }
}

/** No credentials, bad credentials, or a token that is no longer valid. */
export class UnauthorizedError extends AppError {
  constructor(message = 'authentication required') {
    super('UNAUTHORIZED', message)
  }
}

/** Authenticated, but the permission named in `required` is missing. */
export class ForbiddenError extends AppError {
  /** `env`: the environment acted in (docs/environments.md#permissions); either form of the permission will do. */
  constructor(required: string, env?: string) {
    super(
      'FORBIDDEN',
      env === undefined
        ? `this action needs the ${required} permission`
        : `this action needs the ${required} permission for environment ${env} (${required} or ${required}@${env})`,
      { required: env === undefined ? required : `${required}@${env}` },
    )
  }
}

/**
 * A direct change of a protected environment's state (docs/change-control.md#protected-environments):
 * it goes through a change request, unless the caller holds `flag:bypass` for that environment.
 */
export class ChangeRequestRequiredError extends AppError {
  constructor(
    readonly environment: string,
    message = `environment ${environment} is protected: what it serves changes through a change request (POST /api/change-requests, or flagd change-request create), or by someone holding flag:bypass@${environment}`,
  ) {
    super('CHANGE_REQUEST_REQUIRED', message, { environment })
  }
}

/** The named resource does not exist. */
export class NotFoundError extends AppError {
  constructor(message: string) {
    super('NOT_FOUND', message)
  }
}

/** The request conflicts with current state (name taken, last admin, self-deletion, ...). */
export class ConflictError extends AppError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('CONFLICT', message, details)
  }
}

/** `If-Match` named a revision that is no longer current. */
export class PreconditionFailedError extends AppError {
  constructor(message: string, details?: Record<string, unknown>) {
    super('PRECONDITION_FAILED', message, details)
  }
}

/** Too many failed logins; the caller may retry after `retryAfterSeconds`. */
export class TooManyRequestsError extends AppError {
  constructor(readonly retryAfterSeconds: number) {
    super('TOO_MANY_REQUESTS', `too many failed logins; retry in ${retryAfterSeconds} s`, { retryAfter: retryAfterSeconds })
  }
}

/** Storage refused a write; the service is read-only until restarted. */
export class UnavailableError extends AppError {
  constructor(message = 'storage is unavailable; the service is read-only until it is restarted') {
    super('UNAVAILABLE', message)
  }
}
