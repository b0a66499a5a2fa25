/**
 * Flag names (docs/api.md#flag-names): segments joined by `/`, and the rule that a name may not be
 * both a flag and a group (a prefix of another flag's name). A segment takes what OpenFeature
 * flagd's keys use besides letters and digits (`team:checkout`, `_internal`), so flagd files move
 * over with their keys unchanged.
 */

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9_.:-]{0,63}$/
const RESERVED = new Set(['constructor', 'prototype', '__proto__'])
export const NAME_MAX = 255

/** Why `name` is not a valid flag name, or `undefined` when it is. */
export function nameProblem(name: unknown): string | undefined {
  if (typeof name !== 'string') return 'must be a string'
  if (name.length === 0) return 'must not be empty'
  if ([...name].length > NAME_MAX) return `must be at most ${NAME_MAX} characters`
  for (const segment of name.split('/')) {
    if (segment.length === 0) return 'must not have empty segments (leading, trailing or double "/")'
    if (segment.length > 64) return 'segments must be at most 64 characters'
    if (!SEGMENT.test(segment)) return 'segments may contain only A-Z a-z 0-9 _ - . : and must start with a letter, a digit or _'
    if (RESERVED.has(segment)) return `"${segment}" is not allowed as a segment`
  }
  return undefined
}

/**
 * Which existing name blocks `name` under the flag/group rule: a flag that is a group prefix of
 * `name`, or a flag inside the group `name`. `ignore` is a name to leave out (the flag being renamed).
 */
export function nameCollision(name: string, existing: Iterable<string>, ignore?: string): string | undefined {
  const group = `${name}/`
  for (const other of existing) {
    if (other === ignore || other === name) continue
    if (other.startsWith(group) || name.startsWith(`${other}/`)) return other
  }
  return undefined
}

/** Names and their group prefixes, for checking many names against the flag/group rule at once. */
export interface NameIndex {
  /** The name that blocks `name`, as `nameCollision` would find it, or `undefined`. */
  collision(name: string): string | undefined
}

/** Indexes `names` in O(total segments), so checking n names costs O(n) instead of O(n²). */
export function indexNames(names: Iterable<string>): NameIndex {
  const flags = new Set<string>()
  const groups = new Map<string, string>()
  for (const name of names) {
    flags.add(name)
    for (let i = name.indexOf('/'); i !== -1; i = name.indexOf('/', i + 1)) {
      const group = name.slice(0, i)
      if (!groups.has(group)) groups.set(group, name)
    }
  }
  return {
    collision(name) {
      const inside = groups.get(name)
      if (inside !== undefined && inside !== name) return inside
      for (let i = name.indexOf('/'); i !== -1; i = name.indexOf('/', i + 1)) {
        const prefix = name.slice(0, i)
        if (flags.has(prefix)) return prefix
      }
      return undefined
    },
  }
}
