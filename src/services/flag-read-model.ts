/**
 * The read side of flags: names kept sorted (rebuilt only when the store changed) and each flag
 * serialised once (cached by object identity; stored flags are never changed in place). A list or
 * prefix query joins cached strings instead of re-serialising, and a prefix is found by binary
 * search, since names are ASCII and sort by code point.
 */

import { toFlagResource, type Flag } from '../domain/flag.ts'
import type { Store } from '../storage/json-file-store.ts'

/** Cached views of the flags in a store. */
export interface FlagReadModel {
  /** Flag names in code-point order. */
  names(): readonly string[]
  /** The flag's API resource as JSON text. */
  json(flag: Flag): string
  /** A JSON array of the flags whose names start with `prefix`. */
  listJson(prefix: string): string
  /** The flags whose names start with `prefix`, in order. */
  list(prefix: string): Flag[]
}

function lowerBound(names: readonly string[], prefix: string): number {
  let lo = 0
  let hi = names.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    if ((names[mid] as string) < prefix) lo = mid + 1
    else hi = mid
  }
  return lo
}

/** Creates the read model over a store. */
export function createFlagReadModel(store: Store): FlagReadModel {
  const texts = new WeakMap<Flag, string>()
  let sorted: string[] = []
  let sortedAt = -1
  let allJson: string | undefined

  const names = () => {
    if (sortedAt !== store.version) {
      sorted = Object.keys(store.state.flags).sort()
      sortedAt = store.version
      allJson = undefined
    }
    return sorted
  }
  const json = (flag: Flag) => {
    let text = texts.get(flag)
    if (text === undefined) {
      text = JSON.stringify(toFlagResource(flag))
      texts.set(flag, text)
    }
    return text
  }
  const matching = (prefix: string): string[] => {
    const all = names()
    if (prefix === '') return all as string[]
    const out: string[] = []
    for (let i = lowerBound(all, prefix); i < all.length && (all[i] as string).startsWith(prefix); i++) out.push(all[i] as string)
    return out
  }
  return {
    names,
    json,
    list: (prefix) => matching(prefix).map((n) => store.state.flags[n] as Flag),
    listJson(prefix) {
      const list = matching(prefix) // names() has dropped allJson if the flags changed
      const render = () => `[${list.map((n) => json(store.state.flags[n] as Flag)).join(',')}]`
      return prefix === '' ? (allJson ??= render()) : render()
    },
  }
}
