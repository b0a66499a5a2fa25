/**
 * Change requests (docs/change-control.md#change-requests): a proposed change of one environment's
 * state of one or more flags, reviewed before it lands. This module holds the record, its states and
 * which moves between them are allowed, and the check of a request's `changes`; the service does
 * the rest (who may, when, and the durable writes).
 */

import type { Actor } from './principal.ts'

/** Where a request stands. */
export type ChangeRequestState = 'open' | 'approved' | 'scheduled' | 'applied' | 'rejected' | 'cancelled' | 'failed'

/** Every state, in the order a request moves through them. */
export const CHANGE_REQUEST_STATES: readonly ChangeRequestState[] = [
  'open',
  'approved',
  'scheduled',
  'applied',
  'rejected',
  'cancelled',
  'failed',
]

/** The states a request may still be reviewed, edited, cancelled or applied in. */
export const PENDING_STATES: ReadonlySet<ChangeRequestState> = new Set(['open', 'approved', 'scheduled'])

/** One flag's new fields (per-environment, or shared ones that change what it serves), or its deletion. */
export interface RequestedChange {
  flag: string
  /** The fields to set (empty for a deletion). */
  set: Record<string, unknown>
  /** Deletes the flag, in every environment (docs/change-control.md#change-requests). */
  delete?: true
  /** Archives the flag, in every environment (docs/change-control.md#change-requests). */
  archive?: true
}

/** One person's (or token's) verdict, with their words. */
export interface Review {
  by: Actor
  at: string
  comment?: string
}

/** A stored change request. */
export interface ChangeRequest {
  id: string
  environment: string
  title: string
  description: string
  state: ChangeRequestState
  author: Actor
  changes: RequestedChange[]
  /** Per flag: the revision of the last change that affected this environment when the request was made. */
  baseRevisions: Record<string, number>
  /** Per flag: the id of the flag the request was made on, so one deleted and made again since is not taken for it (kept from the API). */
  baseFlagIds?: Record<string, string>
  approvals: Review[]
  /** Who rejected it, when it was rejected. */
  rejection?: Review
  scheduledAt: string | null
  createdAt: string
  updatedAt: string
  appliedAt?: string
  /** Why applying it failed (state `failed`). */
  failureReason?: string
  /** Counts every change to the request itself. */
  revision: number
}

/** The per-environment fields a change request may set. */
export const REQUESTABLE_FIELDS = ['valueExists', 'value', 'enabled', 'targeting', 'chancePercentB', 'rollout'] as const

/**
 * The shared fields a change request may set too: those that change what a protected environment
 * serves (docs/change-control.md#change-requests); they change every environment when applied.
 */
export const SHARED_REQUESTABLE_FIELDS = ['type', 'defaultValue', 'variants', 'metadata', 'prerequisites', 'enumValues'] as const

/** Whether `change` reaches beyond its environment (a shared field or a deletion): it needs the unscoped `flag:write`. */
export function reachesEveryEnvironment(change: RequestedChange): boolean {
  return change.delete === true || change.archive === true || SHARED_REQUESTABLE_FIELDS.some((field) => Object.hasOwn(change.set, field))
}

/** The audit action of a request's change from `before` to `after` (docs/change-control.md#audit). */
export function changeRequestAction(before: ChangeRequest | null, after: ChangeRequest | null): string {
  if (before === null) return 'change-request.created'
  if (after === null) return 'change-request.deleted'
  if (after.state !== before.state) {
    if (after.state === 'approved' || after.state === 'scheduled')
      return after.approvals.length > before.approvals.length ? 'change-request.approved' : 'change-request.updated'
    if (after.state === 'open') return 'change-request.updated'
    return `change-request.${after.state}`
  }
  return after.approvals.length > before.approvals.length ? 'change-request.approved' : 'change-request.updated'
}
