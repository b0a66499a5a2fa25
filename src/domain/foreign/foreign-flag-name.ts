/**
 * Names of flags brought from other tools (docs/migrations.md#from-other-tools): a key that is a
 * valid flag name is kept; any other has each character a flag name cannot hold turned into `_`
 * (`.` `:` `-` are kept, `/` too is turned, so a key is always one segment); a key that is empty
 * or longer than 64 characters after that, or that two keys of the file would share, is skipped.
 */

import { nameProblem } from '../flag-name.ts'
import type { SkippedFlag } from './foreign-translation.ts'

const SEGMENT_MAX = 64

/** The flag name of a tool's `key`, or `undefined` when it cannot become one. */
export function foreignFlagName(key: string): string | undefined {
  if (nameProblem(key) === undefined) return key
  let mapped = key.replace(/[^A-Za-z0-9_.:-]/gu, '_')
  if (!/^[A-Za-z0-9_]/u.test(mapped)) mapped = `_${mapped.slice(1)}`
  if (mapped.length === 0 || [...mapped].length > SEGMENT_MAX) return undefined
  return nameProblem(mapped) === undefined ? mapped : undefined
}

/**
 * The flag names of a file's `keys` (in the file's order): key → name for those that get one, and
 * the keys skipped, each with its reason (no valid name, or a name another key maps to as well).
 */
export function foreignFlagNames(keys: readonly string[]): { names: Map<string, string>; skipped: SkippedFlag[] } {
  const byName = new Map<string, string[]>()
  const skipped: SkippedFlag[] = []
  for (const key of keys) {
    const name = foreignFlagName(key)
    if (name === undefined) {
      skipped.push({ name: key, reason: 'cannot become a flag name (empty or longer than 64 characters once mapped)' })
      continue
    }
    byName.set(name, [...(byName.get(name) ?? []), key])
  }
  const names = new Map<string, string>()
  for (const [name, sharing] of byName) {
    if (sharing.length === 1) names.set(sharing[0] as string, name)
    else
      for (const key of sharing)
        skipped.push({ name: key, reason: `${sharing.filter((k) => k !== key).join(', ')} would take the same flag name ${name}` })
  }
  return { names, skipped }
}
