/**
 * How the UI writes a flag (docs/ui.md#change-control): directly with `PUT` (sent with `If-Match`),
 * or, in a protected environment, after the `Review changes` dialog
 * (docs/ui.md#review-before-protected-changes): the per-environment fields that differ from what the
 * environment serves go into a change request (with its title, comment and schedule), and shared
 * fields, which need no review, are still saved directly; someone holding `flag:bypass` there may
 * apply the write at once instead.
 */

import { REQUESTABLE_FIELDS, SHARED_REQUESTABLE_FIELDS } from '../../domain/change-request.ts'
import { api } from './api.ts'
import { changeInWords } from './change-words.ts'
import { current, useEnvironments } from './environment-choice.ts'
import type { components } from './generated/api-types.ts'
import { needsReview, type ReviewChoice, type ReviewOutcome, reviewChanges } from './review-dialog.tsx'

// what a protected environment serves: its state, and the shared fields every environment serves
// (type, default value, variants, metadata, prerequisites); only the rest (the description, the
// constraints) needs no review (docs/ui.md#review-before-protected-changes)
const REQUESTABLE: ReadonlySet<string> = new Set([...REQUESTABLE_FIELDS, ...SHARED_REQUESTABLE_FIELDS])

/** What a write did: saved (the flag's new revision), requested (the request), or refused (the error). */
export type WriteOutcome = { saved: number } | { requested: { id: string; state: string } } | { error: unknown }

/** A cancelled review, told as a refusal so every form keeps its edits and says nothing was written. */
export const CANCELLED: WriteOutcome = { error: { error: { code: 'CANCELLED', message: 'review cancelled: nothing was changed' } } }

/**
 * Whether changes of the chosen environment's state are reviewed (and so requested by default): it
 * is protected. A bypass is offered in the review itself, never taken silently.
 */
export function useNeedsRequest(_permissions: readonly string[]): boolean {
  const { list, current: env } = useEnvironments()
  return list.find((e) => e.name === env)?.protected === true
}

/** Makes a change request in `environment` from the review's `choice` (docs/api.md#change-requests). */
export async function requestChanges(
  environment: string,
  choice: Extract<ReviewChoice, { apply: false }>,
  changes: { flag: string; set: Record<string, unknown> }[],
): Promise<ReviewOutcome> {
  const { data, error } = await api.POST('/api/change-requests', {
    body: {
      environment,
      title: choice.title,
      ...(choice.description.trim() ? { description: choice.description } : {}),
      changes,
      ...(choice.scheduledAt ? { scheduledAt: choice.scheduledAt } : {}),
    },
  })
  return data ? { requested: { id: (data as { id: string }).id, state: (data as { state: string }).state } } : { error }
}

/** Writes `body` to flag `flag` (as the page last read it); `scheduledAt` (ISO) starts the review's schedule. */
export async function writeFlag(
  flag: Record<string, unknown>,
  body: Record<string, unknown>,
  viaRequest: boolean,
  scheduledAt?: string,
): Promise<WriteOutcome> {
  const name = String(flag.name)
  const environment = current()
  let revision = flag.revision
  const put = async (patch: Record<string, unknown>): Promise<WriteOutcome> => {
    const { data, error } = await api.PUT('/api/flags/{flagName}', {
      params: { path: { flagName: name }, header: { 'If-Match': `"${revision}"` } },
      // the page builds the patch from the fields it shows; the server validates it whole
      body: patch as components['schemas']['FlagUpdate'],
    })
    if (!data) return { error }
    revision = (data as { revision: number }).revision
    return { saved: revision as number }
  }
  if (environment === undefined || !(viaRequest || needsReview(environment))) return put(body)
  const set: Record<string, unknown> = {}
  const shared: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) {
    if (!REQUESTABLE.has(key)) shared[key] = value
    else if (JSON.stringify(value ?? null) !== JSON.stringify(flag[key] ?? null)) set[key] = value
  }
  let sharedMoves = Object.entries(shared).some(([k, v]) => JSON.stringify(v ?? null) !== JSON.stringify(flag[k] ?? null))
  if (Object.keys(set).length === 0) return sharedMoves ? put(shared) : { saved: flag.revision as number }
  let written: WriteOutcome = CANCELLED
  // the revision the shared fields were saved as, when a request then refused left them saved
  let sharedSaved: number | undefined
  const reviewed = await reviewChanges({
    environment,
    changes: [{ flag: name, lines: changeInWords(flag, set) }],
    title: `Change ${name}: ${Object.keys(set).join(', ')}`,
    scheduledAt,
    async run(choice) {
      if (choice.apply) {
        written = await put(body)
        return 'error' in written ? written : { applied: true }
      }
      if (sharedMoves) {
        // shared fields need no review: saved first, once, whatever the request's fate
        const saved = await put(shared)
        if ('error' in saved) return saved
        sharedMoves = false
        if ('saved' in saved) sharedSaved = saved.saved
      }
      const made = await requestChanges(environment, choice, [{ flag: name, set }])
      if ('requested' in made) written = made
      return made
    },
  })
  if (!('cancelled' in reviewed)) return written
  // a cancel changes nothing more, but what an attempt saved stays saved: said so, never "nothing"
  if (sharedSaved === undefined) return CANCELLED
  const fields = Object.keys(shared).filter((k) => JSON.stringify(shared[k] ?? null) !== JSON.stringify(flag[k] ?? null))
  const message = `review cancelled: no change request was made, but ${fields.join(', ')} ${fields.length === 1 ? 'was' : 'were'} saved as revision ${sharedSaved}`
  return { error: { error: { code: 'CANCELLED', message } } }
}
