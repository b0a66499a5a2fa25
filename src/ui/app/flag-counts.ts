/**
 * What the Flags page's counters count (docs/ui.md#flags-page-counters-and-shortcuts), without a
 * browser: requests the person may approve, running rollouts, changes within 24 h, stale flags.
 */

import { grants } from '../../domain/permission.ts'

/** A change request as the counters need it. */
export type ListedRequest = {
  id: string
  environment: string
  state: string
  author?: { id?: string }
  approvals?: { by?: { id?: string } }[]
  changes: { flag: string }[]
}

/** A flag as the counters need it. */
export type CountedFlag = { name: string; updatedAt?: string; rollout?: { status?: string } | null }

const DAY_MS = 86_400_000

/** Whether person `me` may approve request `r`: open, not theirs, not approved by them yet, `flag:approve` in its environment. */
export function mayReview(r: ListedRequest, me: string, permissions: readonly string[]): boolean {
  return (
    r.state === 'open' &&
    r.author?.id !== me &&
    !(r.approvals ?? []).some((a) => a.by?.id === me) &&
    grants(permissions, 'flag:approve', r.environment)
  )
}

/** Whether flag `f` changed within 24 h of `at` (the browser's clock). */
export const changedLately = (f: CountedFlag, at: number): boolean => f.updatedAt !== undefined && at - Date.parse(f.updatedAt) <= DAY_MS

/** Whether a rollout runs for flag `f` in the environment it was read in. */
export const rollingOut = (f: CountedFlag): boolean => f.rollout?.status === 'running'

/** The four numbers the strip shows. */
export interface Counts {
  review: number
  rolling: number
  changed: number
  stale: number
}

/** The counts of `flags` (the chosen environment's), `usage` and the requests `toReview`. */
export function countsOf(
  flags: readonly CountedFlag[],
  usage: ReadonlyMap<string, { stale: boolean }>,
  toReview: number,
  at: number,
): Counts {
  return {
    review: toReview,
    rolling: flags.filter(rollingOut).length,
    changed: flags.filter((f) => changedLately(f, at)).length,
    stale: flags.filter((f) => usage.get(f.name)?.stale === true).length,
  }
}
