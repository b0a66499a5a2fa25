/**
 * Which flags in-process providers hold (docs/openfeature.md#in-process-usage): in-process
 * evaluations are only counted when providers report them, so a flag used only in-process would
 * look unused and invite deletion. A flag counts as served, per environment, while a live sync
 * stream holds a document that carries it, and as of the moment the last such stream moved on or
 * closed; a one-off fetch or an RPC answer serves the flags it carried at that moment. Only flags a
 * document or an answer actually carried count (a TAG flag, which the flagd document leaves out,
 * never does). Kept in memory (a restart forgets it, and the providers' reconnection brings it back
 * at once); each replica knows the streams it serves.
 */

import { BoundedMap } from '../domain/bounded-map.ts'

/** The flags one document carried, in one environment (`''`: the default one). */
export interface HeldFlags {
  readonly env: string
  readonly names: ReadonlySet<string>
}

/** One stream's hold: the document it was last sent, until it closes. */
export interface AudienceStream {
  /** The stream was sent a document carrying `flags`. */
  sent(flags: HeldFlags): void
  /** The stream closed: its flags stop being held at once. */
  release(): void
}

/** The tracker (see module comment). */
export interface SyncAudience {
  /** A stream opened; it holds nothing until it is sent a document. */
  stream(): AudienceStream
  /** `names` of environment `env` were served once (a fetch, an RPC answer). */
  served(env: string, names: Iterable<string>): void
  /**
   * When `flagName` of environment `env` was last served to an in-process provider (now while a
   * stream holds it), or `undefined`; `env` `undefined` asks about every environment.
   */
  lastHeldAt(env: string | undefined, flagName: string): number | undefined
  /** True while a live stream holds `flagName` of environment `env` (`undefined`: any). */
  heldNow(env: string | undefined, flagName: string): boolean
}

/** The flags remembered per environment: names come from the store, so this is a backstop. */
const KEPT_FLAGS = 200_000

/** Creates the tracker over `clock` (ms). */
export function createSyncAudience(clock: () => number): SyncAudience {
  // documents some live stream holds, with how many streams hold each
  const live = new Map<HeldFlags, number>()
  const last = new Map<string, BoundedMap<string, number>>()
  const mark = (env: string, names: Iterable<string>) => {
    let times = last.get(env)
    if (times === undefined) last.set(env, (times = new BoundedMap(KEPT_FLAGS)))
    const at = clock()
    for (const name of names) {
      times.delete(name) // the newest last: the oldest go first past the ceiling
      times.set(name, at)
    }
  }
  const holding = (env: string | undefined, flagName: string) => {
    for (const flags of live.keys()) if ((env === undefined || flags.env === env) && flags.names.has(flagName)) return true
    return false
  }
  const hold = (flags: HeldFlags) => live.set(flags, (live.get(flags) ?? 0) + 1)
  const letGo = (flags: HeldFlags) => {
    const holders = (live.get(flags) ?? 1) - 1
    if (holders > 0) return void live.set(flags, holders)
    live.delete(flags)
    mark(flags.env, flags.names) // held until now
  }
  return {
    stream() {
      let current: HeldFlags | undefined
      let closed = false
      return {
        sent(flags) {
          if (closed || flags === current) return
          hold(flags)
          if (current !== undefined) letGo(current)
          current = flags
        },
        release() {
          if (closed) return
          closed = true
          if (current !== undefined) letGo(current)
          current = undefined
        },
      }
    },
    served: mark,
    heldNow: holding,
    lastHeldAt(env, flagName) {
      if (holding(env, flagName)) return clock()
      let at: number | undefined
      for (const [e, times] of last) {
        if (env !== undefined && e !== env) continue
        const t = times.get(flagName)
        if (t !== undefined && (at === undefined || t > at)) at = t
      }
      return at
    },
  }
}
