/**
 * A promotion into a protected environment, reviewed first (docs/ui.md#review-before-protected-changes):
 * Compare's `Promote` and a flag page's `Copy from <env>` show the flags' changes in words, then
 * request them as one change request, or (with `flag:bypass` and the box ticked) promote at once.
 */

import { changeInWords } from './change-words.ts'
import { countOf } from './count-words.ts'
import { requestChanges } from './flag-writes.ts'
import { type Difference, promotionSet, targetState } from './promotion-choice.ts'
import { type ReviewOutcome, type ReviewResult, reviewChanges } from './review-dialog.tsx'

/** Reviews promoting `picked` from `from` into `to`; `promoteNow` is the promotion itself, for a bypass. */
export function reviewPromotion(
  from: string,
  to: string,
  picked: readonly Difference[],
  promoteNow: () => Promise<ReviewOutcome>,
  title = `Promote ${countOf(picked.length, 'flag')} from ${from} to ${to}`,
): Promise<ReviewResult> {
  return reviewChanges({
    environment: to,
    changes: picked.map((d) => ({ flag: d.name, lines: changeInWords(targetState(d), promotionSet(d)) })),
    title,
    run: (choice) =>
      choice.apply
        ? promoteNow()
        : requestChanges(
            to,
            choice,
            picked.map((d) => ({ flag: d.name, set: promotionSet(d) })),
          ),
  })
}
