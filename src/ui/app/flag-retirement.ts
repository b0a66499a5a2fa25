/**
 * Deleting or archiving a flag from its page (docs/ui.md#deleting-or-archiving-while-protected): at
 * once while no environment is protected; otherwise through `Review changes`, since either stops
 * what every protected environment serves. `Request approval` makes the change request (a deletion,
 * or an archive) in the protected environment needing the most approvals, as a shared change is
 * requested (flag-writes.ts); someone holding `flag:bypass` in every protected environment may tick
 * `Apply now without review` to do it at once.
 */

import { api } from './api.ts'
import { protectedEnvironments } from './environment-choice.ts'
import { names, requestChanges, strictest } from './flag-writes.ts'
import { reviewChanges } from './review-dialog.tsx'

/** What a delete or archive came to: done, requested (in `environment`), refused, or cancelled. */
export type RetireOutcome =
  | { done: true }
  | { requested: { id: string; state: string }; environment: string }
  | { error: unknown }
  | { cancelled: true }

/** Deletes (`delete`) or archives (`archive`) flag `name`, reviewed first while any environment is protected. */
export async function retireFlag(name: string, how: 'delete' | 'archive'): Promise<RetireOutcome> {
  const direct = async (): Promise<{ done: true } | { error: unknown }> => {
    const params = { params: { path: { flagName: name } } }
    const { error } =
      how === 'delete' ? await api.DELETE('/api/flags/{flagName}', params) : await api.POST('/api/flags/{flagName}/archive', params)
    return error ? { error } : { done: true }
  }
  const guarded = protectedEnvironments()
  const requestIn = strictest(guarded)?.name
  if (requestIn === undefined) return direct()
  const reached = guarded.map((e) => e.name)
  let outcome: RetireOutcome = { cancelled: true }
  const result = await reviewChanges({
    environment: requestIn,
    changes: [{ flag: name, lines: [`${how} the flag in every environment`] }],
    title: `${how === 'delete' ? 'Delete' : 'Archive'} ${name}`,
    bypassIn: reached,
    reach: `${how === 'delete' ? 'Deleting' : 'Archiving'} a flag reaches every environment: ${names(reached)} (protected), so it is requested in ${requestIn}, whose approval applies it everywhere.`,
    async run(choice) {
      if (choice.apply) {
        const done = await direct()
        outcome = done
        return 'error' in done ? done : { applied: true }
      }
      const made = await requestChanges(requestIn, choice, [
        how === 'delete' ? { flag: name, delete: true } : { flag: name, archive: true },
      ])
      if ('requested' in made) outcome = { ...made, environment: requestIn }
      return made
    },
  })
  return 'cancelled' in result ? result : outcome
}
