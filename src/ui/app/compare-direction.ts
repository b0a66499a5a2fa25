/**
 * Which way the Compare page looks first (docs/ui.md#environments): toward where a release goes.
 * `To` is the first protected environment, else the one after the chosen one in the order they were
 * made (development → staging → production), else the chosen one; `From` is the one just before
 * `To` (or after it, when `To` comes first).
 */

/** The `From` and `To` Compare opens with, among `environments` (in the order they were made). */
export function compareDirection(
  environments: readonly { name: string; protected: boolean }[],
  chosen: string | undefined,
): { from: string; to: string } {
  const names = environments.map((e) => e.name)
  if (names.length === 0) return { from: '', to: '' }
  const here = Math.max(0, names.indexOf(chosen ?? ''))
  const protectedAt = environments.findIndex((e) => e.protected)
  const to = protectedAt !== -1 ? protectedAt : Math.min(here + 1, names.length - 1)
  const from = to > 0 ? to - 1 : Math.min(1, names.length - 1)
  return { from: names[from] as string, to: names[to] as string }
}
