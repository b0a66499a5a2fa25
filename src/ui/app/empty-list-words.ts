/**
 * What the Flags page says when no flag is left to show (docs/ui.md#the-flags-table). A filter that
 * finds nothing says what it looks for, so an empty list reads as an answer ("nothing is stale")
 * rather than as a page that did not load; several filters, or a search, at once say only that
 * nothing matches.
 */

import type { LifecycleFilterInput } from './lifecycle-words.ts'

/** The filters of a Flags page address that narrow the list (flag-filters.tsx adds the sort). */
export interface ListNarrowing {
  type: string
  state: string
  rules: boolean
  rolling: boolean
  pending: boolean
  /** Flags of requests the person may approve (the `Needs your review` counter). */
  review: boolean
  /** Flags changed within 24 h (the `Changed in 24 h` counter). */
  changed: boolean
  life: LifecycleFilterInput
}

/** What the counters' and the State filter's empty answers say, by the one filter that is on. */
const ANSWERS: Record<string, string> = {
  stale:
    'No flag is stale. A flag is stale when no application has evaluated it (or held it in an in-process provider) and nobody has changed it for usage.staleDays (30 days unless the daemon is configured otherwise).',
  old: "No flag is potentially stale: none has lived longer than its kind's expected lifetime.",
  review: 'Nothing needs your review: no open change request here waits for your approval.',
  rolling: 'No rollout runs in this environment.',
  changed: 'No flag has changed in the last 24 hours.',
}

/** The sentence for an empty list under `filters` and search text `query`; `searching` when either narrows it. */
export function emptyListWords(filters: ListNarrowing, query: string, searching: boolean): string {
  if (!searching) return 'No flags yet.'
  const on = [
    filters.type !== '' && 'type',
    filters.state !== '' && filters.state,
    filters.rules && 'rules',
    filters.rolling && 'rolling',
    filters.pending && 'pending',
    filters.review && 'review',
    filters.changed && 'changed',
    filters.life.kind !== '' && 'kind',
    filters.life.owner !== '' && 'owner',
    filters.life.tags.trim() !== '' && 'tags',
  ].filter((x): x is string => x !== false)
  const only = query === '' && on.length === 1 ? ANSWERS[on[0] as string] : undefined
  return only ?? 'No flags match.'
}
