/**
 * A change request's changes in words (docs/ui.md#change-requests): per flag, each field it sets
 * from what the environment serves now to what it would serve ("value false → true"), rules and
 * rollouts as sentences, as the history says them.
 */

import { SHARED_REQUESTABLE_FIELDS } from '../../domain/change-request.ts'
import { fieldInWords } from './audit-diff.ts'
import { isPending, type Request } from './change-request-model.ts'
import { fieldWord } from './field-words.ts'
import { localTime } from './local-time.ts'

/** One flag's part of a request, in words. */
export type ChangeLine = {
  flag: string
  /** "value false → true; enabled → false", "deleted" or "archived". */
  words: string
  /** Whether it changes every environment (a shared field or a deletion), not only the request's own. */
  everywhere: boolean
}

const SHARED: ReadonlySet<string> = new Set(SHARED_REQUESTABLE_FIELDS)

/**
 * The lines of `r`'s changes. A field the environment differs in reads "before → after"; one it
 * serves already reads "after (already so)" while the request waits; a closed request's reads "→ after",
 * and an applied one's always does: it says what the request set, whatever changed since.
 */
export function changesInWords(r: Request, time: (iso: string) => string = localTime): ChangeLine[] {
  return r.changes.map((c) => {
    if (c.delete) return { flag: c.flag, words: 'deleted', everywhere: true }
    if (c.archive) return { flag: c.flag, words: 'archived', everywhere: true }
    const parts = Object.entries(c.set).map(([field, after]) => {
      const now = r.state === 'applied' ? undefined : c.diff?.[field]
      const to = fieldInWords(field, after, time)
      if (now) return `${fieldWord(field)} ${fieldInWords(field, now.before, time)} → ${to}`
      if (c.diff && isPending(r)) return `${fieldWord(field)} ${to} (already so)`
      return `${fieldWord(field)} → ${to}`
    })
    return { flag: c.flag, words: parts.join('; ') || 'no change', everywhere: Object.keys(c.set).some((f) => SHARED.has(f)) }
  })
}

/** The request's changes as the API takes them, for the `Show JSON` view. */
export function changesAsJson(r: Request): string {
  return JSON.stringify(
    r.changes.map(({ diff: _diff, ...c }) => c),
    null,
    2,
  )
}

/**
 * What the table of differences from now is headed by: while the request waits, what it changes; once
 * applied, when, and whether the environment serves it still; otherwise what it would change now.
 * `empty`: the environment serves all of it now.
 */
export function diffCaption(r: Request, empty: boolean, time: (iso: string) => string = localTime): string {
  const at = r.scheduledAt && isPending(r) ? `, at ${time(r.scheduledAt)}` : ''
  if (r.state === 'applied') {
    const when = r.appliedAt ? `Applied ${time(r.appliedAt)}` : 'Applied'
    return empty
      ? `${when}: ${r.environment} serves all of it now.`
      : `${when}; ${r.environment} has changed since. What it serves now beside what the request set`
  }
  if (isPending(r))
    return empty
      ? `What it changes in ${r.environment}${at}: nothing; ${r.environment} serves all of it now.`
      : `What it changes in ${r.environment}${at}`
  return empty
    ? `Not applied (${r.state}): ${r.environment} serves all of it now anyway.`
    : `Not applied (${r.state}): what it would change in ${r.environment} now`
}
