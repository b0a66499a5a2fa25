/**
 * The bodies of change-request routes, checked (docs/change-control.md#change-requests): every
 * problem at once, each named by its field (`changes[0].set.value`), so a script or the UI can put
 * the message next to what is wrong. Whether each change is valid for its flag is checked by the
 * service against the newest state, with the same field names.
 */

import { REQUESTABLE_FIELDS, type RequestedChange, SHARED_REQUESTABLE_FIELDS } from '../domain/change-request.ts'
import { codePointCount } from '../domain/code-points.ts'
import { type FieldProblem, InvalidError, ValidationFailedError } from '../domain/errors.ts'
import { DESCRIPTION_MAX } from '../domain/flag-definition.ts'
import { parseIsoInstant } from '../domain/iso-instant.ts'
import { isJsonObject } from '../domain/json-object.ts'
import { writableRolloutInput } from '../domain/rollout.ts'
import { unknownFieldReason } from '../domain/spelling-suggestion.ts'

/** At most this many flags in one request. */
export const MAX_REQUESTED_CHANGES = 1000
const TITLE_MAX = 200
const REQUESTABLE: ReadonlySet<string> = new Set([...REQUESTABLE_FIELDS, ...SHARED_REQUESTABLE_FIELDS])
const SETTABLE = [...REQUESTABLE_FIELDS, ...SHARED_REQUESTABLE_FIELDS].join(', ')

/** A checked create or edit body. */
export interface RequestInput {
  environment?: string
  title: string
  description: string
  changes: RequestedChange[]
  scheduledAt: string | null
}

/** Checks a `POST` body (`withEnvironment`) or a `PUT` body (without it). */
export function parseRequestInput(input: unknown, withEnvironment: boolean): RequestInput {
  if (!isJsonObject(input)) throw new InvalidError('the body must be a JSON object', 'body', 'must be a JSON object')
  const problems: FieldProblem[] = []
  const known = ['title', 'description', 'changes', 'scheduledAt', ...(withEnvironment ? ['environment'] : [])]
  for (const key of Object.keys(input)) if (!known.includes(key)) problems.push({ field: key, reason: unknownFieldReason(key, known) })
  const { environment, title, description = '', changes, scheduledAt = null } = input
  if (withEnvironment && typeof environment !== 'string')
    problems.push({ field: 'environment', reason: environment === undefined ? 'required' : 'must be an environment name' })
  if (typeof title !== 'string' || title.trim() === '' || codePointCount(title, TITLE_MAX) > TITLE_MAX)
    problems.push({ field: 'title', reason: `required: 1 to ${TITLE_MAX} characters` })
  if (typeof description !== 'string' || codePointCount(description, DESCRIPTION_MAX) > DESCRIPTION_MAX)
    problems.push({ field: 'description', reason: `must be a string of at most ${DESCRIPTION_MAX} characters` })
  let scheduled: string | null = null
  if (scheduledAt !== null) {
    const at = typeof scheduledAt === 'string' ? parseIsoInstant(scheduledAt) : undefined
    if (at === undefined) problems.push({ field: 'scheduledAt', reason: 'must be an ISO 8601 date-time with a zone, or null' })
    else scheduled = new Date(at).toISOString()
  }
  const parsed: RequestedChange[] = []
  if (!Array.isArray(changes) || changes.length === 0 || changes.length > MAX_REQUESTED_CHANGES)
    problems.push({ field: 'changes', reason: `required: 1 to ${MAX_REQUESTED_CHANGES} changes of {flag, set}` })
  else {
    const seen = new Set<string>()
    for (const [i, change] of changes.entries()) {
      const at = `changes[${i}]`
      if (!isJsonObject(change)) {
        problems.push({ field: at, reason: 'must be {flag, set}' })
        continue
      }
      for (const key of Object.keys(change))
        if (key !== 'flag' && key !== 'set' && key !== 'delete' && key !== 'archive')
          problems.push({ field: `${at}.${key}`, reason: unknownFieldReason(key, ['flag', 'set', 'delete', 'archive']) })
      const { flag, set } = change
      if (typeof flag !== 'string' || flag === '') problems.push({ field: `${at}.flag`, reason: 'required: a flag name' })
      else if (seen.has(flag)) problems.push({ field: `${at}.flag`, reason: `${flag} is changed twice; one change per flag` })
      else seen.add(flag)
      // an archive: {flag, archive: true}, nothing to set (docs/change-control.md#change-requests)
      if (change.archive !== undefined) {
        if (change.archive !== true) problems.push({ field: `${at}.archive`, reason: 'must be true (or left out)' })
        else if (set !== undefined || change.delete !== undefined)
          problems.push({
            field: `${at}.${set !== undefined ? 'set' : 'delete'}`,
            reason: 'an archive sets nothing: {flag, archive: true}',
          })
        else if (typeof flag === 'string') parsed.push({ flag, set: {}, archive: true })
        continue
      }
      // a deletion: {flag, delete: true}, nothing to set
      if (change.delete !== undefined) {
        if (change.delete !== true) problems.push({ field: `${at}.delete`, reason: 'must be true (or left out)' })
        else if (set !== undefined) problems.push({ field: `${at}.set`, reason: 'a deletion sets nothing: {flag, delete: true}' })
        else if (typeof flag === 'string') parsed.push({ flag, set: {}, delete: true })
        continue
      }
      if (!isJsonObject(set) || Object.keys(set).length === 0) {
        problems.push({ field: `${at}.set`, reason: `required: an object of ${SETTABLE} (or delete: true)` })
        continue
      }
      for (const key of Object.keys(set))
        if (!REQUESTABLE.has(key))
          problems.push({
            field: `${at}.set.${key}`,
            reason: `not a field a request sets (${SETTABLE}); other shared fields change with PUT /api/flags/{name}`,
          })
      // a rollout as read carries status and percent: kept as it is written (docs/guarded-rollouts.md#status-and-percent)
      const kept = set.rollout === undefined ? set : { ...set, rollout: writableRolloutInput(set.rollout) }
      if (typeof flag === 'string') parsed.push({ flag, set: kept as typeof set })
    }
  }
  if (problems.length > 0) throw new ValidationFailedError(problems)
  return {
    ...(withEnvironment ? { environment: environment as string } : {}),
    title: (title as string).trim(),
    description: description as string,
    changes: parsed,
    scheduledAt: scheduled,
  }
}

/** The optional `{comment}` of an approval, or the required one of a rejection. */
export function parseComment(input: unknown, required: boolean): string | undefined {
  const body = input === undefined || input === null ? {} : input
  if (!isJsonObject(body)) throw new InvalidError('the body must be a JSON object', 'body', 'must be a JSON object')
  const unknown = Object.keys(body).find((k) => k !== 'comment')
  if (unknown !== undefined) {
    const reason = unknownFieldReason(unknown, ['comment'])
    throw new InvalidError(`unknown field ${JSON.stringify(unknown)}${reason.slice('unknown field'.length)}`, unknown, reason)
  }
  const { comment } = body
  if (comment === undefined && !required) return undefined
  if (typeof comment !== 'string' || (required && comment.trim() === '') || codePointCount(comment, DESCRIPTION_MAX) > DESCRIPTION_MAX)
    throw new InvalidError(
      required ? 'a rejection needs a comment saying why' : 'comment must be a string',
      'comment',
      required ? 'required: why it is rejected' : `must be a string of at most ${DESCRIPTION_MAX} characters`,
    )
  return comment
}
