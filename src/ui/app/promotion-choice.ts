/**
 * What Compare ticks and requests by default (docs/ui.md#review-before-protected-changes): every
 * flag whose state differs, except one whose promotion would end or replace a rollout still running
 * in the target, or undo a change the target saw after the source's last (a hotfix made there);
 * and a promotion as the change request that carries it.
 */

/** One flag's differences between two environments, as `GET /api/environments/compare` lists them. */
export type Difference = {
  name: string
  fields: Record<string, { from: unknown; to: unknown }>
  /** The revision at which each environment last saw the flag change. */
  revisions?: { from: number; to: number }
}

/** Whether the target changed after the source did (a hotfix there): promoting `d` would undo that change. */
export const targetAhead = (d: Difference): boolean => d.revisions !== undefined && d.revisions.to > d.revisions.from

/** Whether promoting `d` would end or replace a rollout not yet finished in the target at `nowMs`. */
export function endsRunningRollout(d: Difference, nowMs: number): boolean {
  const target = d.fields.rollout?.to as { end?: unknown; halted?: unknown } | null | undefined
  if (!target || typeof target.end !== 'string' || target.halted) return false
  return Date.parse(target.end) > nowMs
}

/** The flags ticked when a comparison shows: all, but those whose promotion would end a running rollout or undo a newer change. */
export function promotedByDefault(differences: readonly Difference[], nowMs: number): Set<string> {
  return new Set(differences.filter((d) => !endsRunningRollout(d, nowMs) && !targetAhead(d)).map((d) => d.name))
}

/** The fields a change request sets to promote `d`: each differing field's source value (a value the source lacks goes with `valueExists`). */
export function promotionSet(d: Difference): Record<string, unknown> {
  const set: Record<string, unknown> = {}
  for (const [field, { from }] of Object.entries(d.fields)) if (!(field === 'value' && from === null)) set[field] = from
  return set
}

/** The target's state of the fields `d` changes, for saying the change in words. */
export function targetState(d: Difference): Record<string, unknown> {
  return Object.fromEntries(Object.entries(d.fields).map(([field, { to }]) => [field, to]))
}
