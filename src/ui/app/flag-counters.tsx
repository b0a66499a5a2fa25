/**
 * The strip of four counters above the flags table (docs/ui.md#flags-page-counters-and-shortcuts):
 * each a count of what the person may see and a link to the table filtered by it.
 */

import { holdsIn } from './environment-choice.ts'
import type { ListedRequest } from './flag-list-data.ts'
import type { TableFlag, Use } from './flag-table.tsx'
import { link } from './router.ts'

const DAY_MS = 86_400_000

/** Whether person `me` may approve request `r`: open, not theirs, not approved by them yet, `flag:approve` in its environment. */
export function mayReview(r: ListedRequest, me: string, permissions: readonly string[]): boolean {
  return (
    r.state === 'open' &&
    r.author?.id !== me &&
    !(r.approvals ?? []).some((a) => a.by?.id === me) &&
    holdsIn(permissions, 'flag:approve', r.environment)
  )
}

/** Whether flag `f` changed within 24 h of `at` (the browser's clock). */
export const changedLately = (f: TableFlag, at: number): boolean => f.updatedAt !== undefined && at - Date.parse(f.updatedAt) <= DAY_MS

/** Whether a rollout runs for flag `f` in the environment it was read in. */
export const rollingOut = (f: TableFlag): boolean => f.rollout?.status === 'running'

/** The four numbers the strip shows. */
export interface Counts {
  review: number
  rolling: number
  changed: number
  stale: number
}

/** The counts of `flags` (the chosen environment's), `usage` and the requests `toReview`. */
export function countsOf(flags: readonly TableFlag[], usage: ReadonlyMap<string, Use>, toReview: number, at: number): Counts {
  return {
    review: toReview,
    rolling: flags.filter(rollingOut).length,
    changed: flags.filter((f) => changedLately(f, at)).length,
    stale: flags.filter((f) => usage.get(f.name)?.stale === true).length,
  }
}

/** The filter each counter links to: its query parameter and value. */
export const COUNTER_FILTERS = {
  review: ['review', 'true'],
  rolling: ['rolling', 'true'],
  changed: ['changed', '24h'],
  stale: ['state', 'stale'],
} as const

const LABELS: Record<keyof Counts, string> = {
  review: 'Needs your review',
  rolling: 'Rolling out',
  changed: 'Changed in 24 h',
  stale: 'Stale',
}

/** The counters on one line, each linking to the table filtered by it (the other filters are dropped). */
export function FlagCounters({ counts }: { counts: Counts | null }) {
  return (
    <ul class="counters" aria-label="At a glance">
      {(Object.keys(LABELS) as (keyof Counts)[]).map((key) => {
        const [param, value] = COUNTER_FILTERS[key]
        const n = counts?.[key]
        return (
          <li key={key}>
            <a {...link(`?${param}=${value}`)} data-counter={key}>
              <strong class="counter-n">{n ?? '…'}</strong> {LABELS[key]}
            </a>
          </li>
        )
      })}
    </ul>
  )
}
