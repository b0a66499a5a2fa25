/**
 * What a refusal about prerequisites may tell a caller confined by `flagPrefixes`
 * (docs/api.md#prerequisites): flags outside its scope behave as if they did not exist, so a refusal
 * names only the flags it can see and counts the others.
 */

/** Which flag names the caller making a write can see (every one for an unconfined caller). */
export type SeesFlag = (name: string) => boolean

/** Every flag is seen: the system, and callers without `flagPrefixes`. */
export const SEES_EVERY_FLAG: SeesFlag = () => true

/** `names` as a refusal tells them to the caller: the ones it sees, then how many it does not. */
export function namesAsSeen(names: readonly string[], sees: SeesFlag): { text: string; seen: string[] } {
  const seen = names.filter(sees)
  const hidden = names.length - seen.length
  const parts = hidden === 0 ? seen : [...seen, `${hidden} flag${hidden === 1 ? '' : 's'} outside this caller's flagPrefixes`]
  return { text: parts.join(', '), seen }
}
