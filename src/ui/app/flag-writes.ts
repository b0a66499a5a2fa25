/**
 * How the UI writes a flag (docs/ui.md#change-control): directly with `PUT` (sent with `If-Match`),
 * or after the `Review changes` dialog (docs/ui.md#review-before-protected-changes) when the write
 * reaches a protected environment: the chosen environment's own fields that differ from what it
 * serves when it is protected, and, from any environment, the shared fields every environment serves
 * (docs/ui.md#shared-fields-reach-every-environment). What is reviewed becomes one change request;
 * the rest (an unprotected environment's own state, the description, other constraints) is saved
 * directly. Someone holding `flag:bypass` in every protected environment reached may apply it all at
 * once instead.
 */

import { REQUESTABLE_FIELDS, SHARED_REQUESTABLE_FIELDS } from '../../domain/change-request.ts'
import { api } from './api.ts'
import { changeInWords } from './change-words.ts'
import { current, type Environment, environmentNamed, protectedEnvironments, useEnvironments } from './environment-choice.ts'
import { fieldWord } from './field-words.ts'
import type { components } from './generated/api-types.ts'
import type { ReviewChoice, ReviewOutcome } from './review-dialog.tsx'
import { reviewChanges } from './review-dialog.tsx'

const OWN: ReadonlySet<string> = new Set(REQUESTABLE_FIELDS)
const SERVED_SHARED: ReadonlySet<string> = new Set(SHARED_REQUESTABLE_FIELDS.filter((f) => f !== 'enumValues'))

/**
 * Whether setting shared field `key` of `flag` to `value` changes what every environment serves:
 * the type, default value, variants, metadata and prerequisites, and an ENUM's values when one goes
 * (they are its variants; a new one serves nothing yet); a TAG's values and the other constraints
 * only check what is written (docs/environments.md#protected-environments).
 */
export function servedShared(flag: Record<string, unknown>, key: string, value: unknown): boolean {
  if (SERVED_SHARED.has(key)) return true
  if (key !== 'enumValues' || flag.type !== 'ENUM' || !Array.isArray(flag.enumValues)) return false
  const kept = new Set(Array.isArray(value) ? value : [])
  return flag.enumValues.some((v) => !kept.has(v))
}

/** What a write did: saved (the flag's new revision; `bypassed` when it skipped a review), requested (the request, in `environment`), or refused (the error). */
export type WriteOutcome =
  | { saved: number; bypassed?: true }
  | { requested: { id: string; state: string }; environment?: string; saved?: number }
  | { error: unknown }

/** A cancelled review, told as a refusal so every form keeps its edits and says nothing was written. */
export const CANCELLED: WriteOutcome = { error: { error: { code: 'CANCELLED', message: 'review cancelled: nothing was changed' } } }

/** The status line for a write that did not fail: `saved` words a plain save's revision. */
export function writtenInWords(result: Exclude<WriteOutcome, { error: unknown }>, saved: (revision: number) => string): string {
  if ('saved' in result && !('requested' in result))
    return result.bypassed ? `${saved(result.saved)}, applied without review (recorded as a bypass)` : saved(result.saved)
  const where = result.environment === undefined || result.environment === current() ? '' : ` in ${result.environment}`
  const also = result.saved !== undefined ? `${current()}'s own changes saved as revision ${result.saved}; ` : ''
  return `${also}change request made${where} (${result.requested.state}): see Change requests`
}

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
  changes: { flag: string; set?: Record<string, unknown>; delete?: true; archive?: true }[],
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

/**
 * Where a change of shared fields is requested from unprotected `environment`: the protected
 * environment that needs the most approvals (the first of them on a tie), since its approval
 * applies the change everywhere (docs/change-control.md#change-requests).
 */
export function strictest(guarded: readonly Environment[]): Environment | undefined {
  return guarded.reduce<Environment | undefined>(
    (best, e) => (best === undefined || e.requiredApprovals > best.requiredApprovals ? e : best),
    undefined,
  )
}

/** `list` in words: "a", "a and b", "a, b and c". */
export const names = (list: readonly string[]) =>
  list.length <= 1 ? (list[0] ?? '') : `${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`

/** The sentence under `Review changes` saying which environments a shared change reaches. */
function reachInWords(fields: readonly string[], guarded: readonly string[], requestedIn: string, direct: string | undefined): string {
  const shared = `${names(fields)} ${fields.length === 1 ? 'is' : 'are'} shared by every environment`
  const reach = `this change reaches ${names(guarded)} (protected), so it is requested in ${requestedIn}, whose approval applies it everywhere.`
  return `${shared}: ${reach}${direct ? ` ${direct}` : ''}`
}

/** How a write other than a plain save (a rollback) is carried out: in which environment, under what title, and what applying it all at once is. */
export interface WriteHow {
  environment: string
  title: string
  /** The whole write at once, for `Apply now without review` (a rollback's own `POST /api/rollbacks`). */
  applyAll: () => Promise<{ saved: number } | { error: unknown }>
}

/**
 * Writes `body` to flag `flag` (as the page last read it); `scheduledAt` (ISO) starts the review's
 * schedule; `how` names another environment than the chosen one, the title and the bypass's write.
 */
export async function writeFlag(
  flag: Record<string, unknown>,
  body: Record<string, unknown>,
  viaRequest: boolean,
  scheduledAt?: string,
  how?: WriteHow,
): Promise<WriteOutcome> {
  const name = String(flag.name)
  const environment = how?.environment ?? current()
  let revision = flag.revision
  const put = async (patch: Record<string, unknown>): Promise<{ saved: number } | { error: unknown }> => {
    const { data, error } = await api.PUT('/api/flags/{flagName}', {
      params: {
        path: { flagName: name },
        header: { 'If-Match': `"${revision}"` },
        ...(how && environmentNamed(how.environment) ? { query: { environment: how.environment } } : {}),
      },
      // the page builds the patch from the fields it shows; the server validates it whole
      body: patch as components['schemas']['FlagUpdate'],
    })
    if (!data) return { error }
    revision = (data as { revision: number }).revision
    return { saved: revision as number }
  }
  const moves = (key: string) => JSON.stringify(body[key] ?? null) !== JSON.stringify(flag[key] ?? null)
  const chosenGuarded = viaRequest || environmentNamed(environment)?.protected === true
  // reviewed: the chosen environment's own changes where it is protected, shared served fields wherever a protected one exists
  const guarded = protectedEnvironments()
  const set: Record<string, unknown> = {}
  const direct: Record<string, unknown> = {}
  const servedFields: string[] = []
  for (const [key, value] of Object.entries(body)) {
    const reviewed = OWN.has(key) ? chosenGuarded : servedShared(flag, key, value) && guarded.length > 0
    if (!reviewed) direct[key] = value
    else if (moves(key)) {
      set[key] = value
      if (!OWN.has(key)) servedFields.push(key)
    }
  }
  if (environment === undefined || Object.keys(set).length === 0) {
    if (chosenGuarded && !Object.keys(direct).some(moves)) return { saved: flag.revision as number }
    return put(direct)
  }
  // one request: in the chosen environment when protected, else where the shared change needs the most approvals
  const requestIn = chosenGuarded ? environment : (strictest(guarded)?.name ?? environment)
  const reached = servedFields.length > 0 ? guarded.map((e) => e.name) : [environment]
  const ownDirect = Object.keys(direct).filter((k) => OWN.has(k) && moves(k))
  let directMoves = Object.keys(direct).some(moves)
  let written: WriteOutcome = CANCELLED
  // the revision the direct part was saved as, when a request then refused left it saved
  let directSaved: number | undefined
  const reviewed = await reviewChanges({
    environment: requestIn,
    changes: [{ flag: name, lines: changeInWords(flag, set) }],
    title: how?.title ?? `Change ${name}: ${Object.keys(set).map(fieldWord).join(', ')}`,
    scheduledAt,
    bypassIn: reached,
    ...(servedFields.length > 0
      ? {
          reach: reachInWords(
            servedFields.map(fieldWord),
            reached,
            requestIn,
            ownDirect.length > 0 ? `${environment}'s own changes (${names(ownDirect.map(fieldWord))}) are saved directly.` : undefined,
          ),
        }
      : {}),
    async run(choice) {
      if (choice.apply) {
        const saved = await (how ? how.applyAll() : put(body))
        if ('error' in saved) return saved
        written = { ...saved, bypassed: true }
        return { applied: true }
      }
      if (directMoves) {
        // what needs no review is saved first, once, whatever the request's fate
        const saved = await put(direct)
        if ('error' in saved) return saved
        directMoves = false
        directSaved = saved.saved
      }
      const made = await requestChanges(requestIn, choice, [{ flag: name, set }])
      if ('requested' in made)
        written = { ...made, environment: requestIn, ...(ownDirect.length > 0 && directSaved !== undefined ? { saved: directSaved } : {}) }
      return made
    },
  })
  if (!('cancelled' in reviewed)) return written
  // a cancel changes nothing more, but what an attempt saved stays saved: said so, never "nothing"
  if (directSaved === undefined) return CANCELLED
  const fields = Object.keys(direct).filter((k) => JSON.stringify(direct[k] ?? null) !== JSON.stringify(flag[k] ?? null))
  const message = `review cancelled: no change request was made, but ${fields.join(', ')} ${fields.length === 1 ? 'was' : 'were'} saved as revision ${directSaved}`
  return { error: { error: { code: 'CANCELLED', message } } }
}
