/**
 * What a flag's environment tab says (docs/ui.md#a-flags-page): the environment, whether the flag
 * is on (enabled) there, and how many change requests for it wait there ("production · on · 1
 * pending"). Pure, so the words are tested without a browser.
 */

/** Request states that count as pending: open, approved or scheduled (docs/ui.md#change-control). */
const PENDING: ReadonlySet<string> = new Set(['open', 'approved', 'scheduled'])

/** A change request as the list answers it, as far as the counts need. */
export interface ListedRequest {
  environment: string
  state: string
  changes: readonly { flag: string }[]
}

/** How many pending requests change flag `flag`, per environment. */
export function pendingCounts(requests: readonly ListedRequest[], flag: string): Map<string, number> {
  const counts = new Map<string, number>()
  for (const r of requests)
    if (PENDING.has(r.state) && r.changes.some((c) => c.flag === flag)) counts.set(r.environment, (counts.get(r.environment) ?? 0) + 1)
  return counts
}

/** A tab's words: "production · on · 1 pending"; without a known state, the name and the count only. */
export function tabWords(environment: string, enabled: boolean | undefined, pending: number): string {
  const state = enabled === undefined ? [] : [enabled ? 'on' : 'off']
  return [environment, ...state, `${pending} pending`].join(' · ')
}
