/**
 * The strip of four counters above the flags table (docs/ui.md#flags-page-counters-and-shortcuts):
 * each a count of what the person may see and a link to the table filtered by it.
 */

import type { Counts } from './flag-counts.ts'
import { link } from './router.ts'

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
