/**
 * One served snapshot per committed revision and environment (docs/architecture.md#snapshots,
 * docs/decisions/0007-one-snapshot-per-revision.md): the flags as the environment serves them, in
 * name order, what its bulk ETags start with, which flags have rules and which read the clock, each
 * rule compiled once, the answers that are the same for every context of an outcome, each flag's
 * variant names (in-process usage checks reports against them), and the flagd
 * document with its two encodings (sync and export). Every transport reads it; it is built the first
 * time a revision and environment is asked for, and takes over the compiled parts of the flags the
 * previous one of that environment shared with it. Only the newest of each environment is kept.
 */

import { exportFlagsText } from '../domain/export-document.ts'
import { type Flag, isArchived } from '../domain/flag.ts'
import { buildFlagdDocument, type FlagdDocument } from '../domain/flagd-document.ts'
import { namesUnder } from '../domain/names-under.ts'
import { readableJson } from '../domain/readable-json.ts'
import { servedTargeting } from '../domain/rollout.ts'
import { referencedSegments } from '../domain/segment.ts'
import { compileServedRule } from '../domain/served-rule.ts'
import { readsClock } from '../domain/targeting/clock-use.ts'
import type { Expr } from '../domain/targeting/rule-compiler.ts'
import type { Snapshot } from '../storage/store.ts'
import { flagsIn } from './environment-views.ts'
import { sortedSegments } from './migration-export.ts'

/** The flagd document of a served snapshot under one name, and its encodings, each made once. */
export interface FlagdEncodings {
  readonly document: FlagdDocument
  /** The flags it carries (a TAG flag, left out, is not one). */
  readonly names: ReadonlySet<string>
  /** Compact JSON: what the sync protocol sends. */
  readonly sync: string
  /** Indented JSON with a final newline: the flagd export file. */
  readonly file: string
}

/** What one environment serves at one committed revision (see module comment). */
export interface ServedSnapshot {
  readonly snapshot: Snapshot
  /** The environment asked for. */
  readonly environment: string
  /** Every flag by name as the environment serves it (archived ones are not served). */
  readonly flags: ReadonlyMap<string, Flag>
  /** The flags' names in code-point order. */
  readonly names: readonly string[]
  /** What the environment's bulk ETags start with (docs/environments.md#revisions). */
  readonly tag: string
  /** Whether any flag has a rule (then a whole context can change an answer). */
  readonly targeted: boolean
  /** The flags whose rules read `$flagd.timestamp`. */
  readonly clocked: ReadonlySet<string>
  /** The flags whose names start with one of `prefixes` (sorted, not overlapping), in name order. */
  under(prefixes: readonly string[]): Flag[]
  /** The flag's rule compiled (once per flag), `undefined` when it has none. */
  rule(flag: Flag): Expr | undefined
  /**
   * A part of `flag` made once per snapshot, by `make` the first time, kept when `keep` says so: its
   * answer per outcome (keys `''`, `d`, `v\0variant`), its variant names (`variant-names`).
   */
  part<T>(flag: Flag, key: string, make: () => T, keep: (made: T) => boolean): T
  /** The flagd document of every flag and segment, named `name` (docs/targeting.md#flagd-format). */
  flagd(name: string): FlagdEncodings
  /**
   * The `flags` member of the migration export's file text (docs/migrations.md) at `nowMs`, made on
   * first use; made anew while a flag has a rollout, whose status and percent move with the time.
   */
  exportFlags(nowMs: number): string
}

/** The served snapshots of a store, newest per environment. */
export interface ServedSnapshots {
  /** What environment `env` serves at `snapshot`. */
  of(snapshot: Snapshot, env: string): ServedSnapshot
}

/** Options: `keep: false` builds anew on every call (the plain twin tests compare with); `onBuild` counts builds. */
export interface ServedSnapshotOptions {
  keep?: boolean
  onBuild?: (served: ServedSnapshot) => void
}

/** Creates the served snapshots (see module comment). */
export function createServedSnapshots(options: ServedSnapshotOptions = {}): ServedSnapshots {
  // the newest served snapshot of each environment: as many as there are environments
  const newest = new Map<string, ServedSnapshot & Parts>()
  const made = (served: ServedSnapshot & Parts) => {
    options.onBuild?.(served)
    return served
  }
  return {
    of(snapshot, env) {
      if (options.keep === false) return made(buildServed(snapshot, env, undefined))
      // an environment that does not exist (yet) is never kept: no growth from what callers name
      if (!snapshot.environments.has(env)) return made(buildServed(snapshot, env, undefined))
      const key = env
      const kept = newest.get(key)
      if (kept?.snapshot === snapshot) return kept
      // a reader still on an older revision gets its own, not kept
      if (kept !== undefined && kept.snapshot.revision > snapshot.revision) return made(buildServed(snapshot, env, undefined))
      const served = made(buildServed(snapshot, env, kept))
      newest.set(key, served)
      for (const name of newest.keys()) if (!snapshot.environments.has(name)) newest.delete(name)
      return served
    },
  }
}

/** What a served snapshot fills as it is read, and hands on to the next of its environment. */
interface Parts {
  readonly rules: Map<Flag, Expr | undefined>
  /** The parts by key, then flag: a map per key rather than per flag (a map cost about 200 bytes a flag). */
  readonly answers: Map<string, Map<Flag, unknown>>
  readonly encodings: Map<string, FlagdEncodings>
}

/**
 * The flags an environment serves: every one but the archived, which every evaluation path, sync and
 * the flagd export answer as unknown (docs/api.md#archive). The same map when none is archived.
 */
function servedFlags(all: ReadonlyMap<string, Flag>): ReadonlyMap<string, Flag> {
  let archived = false
  for (const flag of all.values()) if (isArchived(flag)) archived = true
  return archived ? new Map([...all].filter(([, flag]) => !isArchived(flag))) : all
}

function buildServed(snapshot: Snapshot, env: string, previous: (ServedSnapshot & Parts) | undefined): ServedSnapshot & Parts {
  const all = flagsIn(snapshot, env)
  const flags = servedFlags(all)
  const names = [...flags.keys()].sort()
  const segments = snapshot.segmentRules()
  let targeted = false
  const clocked = new Set<string>()
  for (const flag of flags.values()) {
    const rule = servedTargeting(flag)
    if (rule === undefined) continue
    targeted = true
    if (readsClock(rule, segments)) clocked.add(flag.name)
  }
  if (clocked.size > 0) for (const flag of flags.values()) if (requiresClocked(flag, flags, clocked)) clocked.add(flag.name)
  const tag = servedTag(snapshot, env, flags)
  const rules = new Map<Flag, Expr | undefined>()
  const answers = new Map<string, Map<Flag, unknown>>()
  // the documents carry over while the environment serves the same flags and segments (its tag says so)
  const sameSegments = previous?.snapshot.revisionOf('segments') === snapshot.revisionOf('segments')
  const encodings = previous !== undefined && sameSegments && previous.tag === tag ? previous.encodings : new Map<string, FlagdEncodings>()
  if (previous !== undefined) {
    // an unchanged flag is the same object: its compiled parts carry over (a rule using segments only
    // while they are unchanged too)
    for (const [flag, expr] of previous.rules)
      if (flags.get(flag.name) === flag && (sameSegments || referencedSegments(servedTargeting(flag)).length === 0)) rules.set(flag, expr)
    for (const [key, byFlag] of previous.answers) {
      const kept = new Map<Flag, unknown>()
      for (const [flag, part] of byFlag) if (flags.get(flag.name) === flag) kept.set(flag, part)
      if (kept.size > 0) answers.set(key, kept)
    }
  }
  const inOrder = () => names.map((n) => flags.get(n) as Flag)
  let exported: string | undefined
  const matching = (prefix: string): Flag[] => namesUnder(names, prefix).map((n) => flags.get(n) as Flag)
  return Object.freeze({
    snapshot,
    environment: env,
    flags,
    names,
    tag,
    targeted,
    clocked,
    rules,
    answers,
    encodings,
    under: (prefixes: readonly string[]) => prefixes.flatMap(matching),
    rule(flag: Flag) {
      if (rules.has(flag)) return rules.get(flag)
      const expr = compileServedRule(flag, segments)
      rules.set(flag, expr)
      return expr
    },
    part<T>(flag: Flag, key: string, make: () => T, keep: (made: T) => boolean): T {
      let known = answers.get(key)
      if (known?.has(flag)) return known.get(flag) as T
      const answer = make()
      if (!keep(answer)) return answer
      if (known === undefined) answers.set(key, (known = new Map()))
      known.set(flag, answer)
      return answer
    },
    flagd(name: string): FlagdEncodings {
      let made = encodings.get(name)
      if (made === undefined) {
        const document = buildFlagdDocument(inOrder(), sortedSegments(snapshot), name)
        made = flagdEncodings(document)
        encodings.set(name, made)
      }
      return made
    },
    exportFlags(nowMs: number) {
      if (exported !== undefined) return exported
      // the migration export keeps archived flags, marked so (docs/migrations.md)
      const flagsNow = flags === all ? inOrder() : [...all.keys()].sort().map((n) => all.get(n) as Flag)
      const text = exportFlagsText(flagsNow, nowMs)
      // a rollout's status and percent move with the time: such an export is made anew
      if (!flagsNow.some((f) => f.rollout !== undefined)) exported = text
      return text
    },
  })
}

/** Whether a flag `flag` requires, through any chain, reads the clock: then its answer moves with time too. */
function requiresClocked(flag: Flag, flags: ReadonlyMap<string, Flag>, clocked: ReadonlySet<string>, seen = new Set<string>()): boolean {
  for (const p of flag.prerequisites ?? []) {
    if (clocked.has(p.flag)) return true
    if (seen.has(p.flag)) continue
    seen.add(p.flag)
    const required = flags.get(p.flag)
    if (required !== undefined && requiresClocked(required, flags, clocked, seen)) return true
  }
  return false
}

/** A flagd document with its encodings; the file's only on first use. */
export function flagdEncodings(document: FlagdDocument): FlagdEncodings {
  let file: string | undefined
  return {
    document,
    names: new Set(Object.keys(document.flags)),
    sync: JSON.stringify(document),
    get file() {
      file ??= readableJson(document)
      return file
    },
  }
}

/**
 * The start of an environment's bulk ETags (docs/environments.md#revisions): the flags' revision
 * while there is one environment (every change is its own);
 * otherwise a tag of what the environment serves (how many flags, the newest revision it saw change,
 * and a digest of each flag's id and that revision, and of when the environment was made), so a
 * change confined to another environment leaves it, every replica computes the same one from the
 * same rows, and an environment removed and made again under its name (its states copied anew, no
 * revision moved) never shares a tag, nor an encoded document, with the one before.
 */
function servedTag(snapshot: Snapshot, env: string, views: ReadonlyMap<string, Flag>): string {
  if (snapshot.environments.size <= 1) return String(snapshot.revisionOf('flags'))
  let newest = 0
  let digest = Bun.hash.crc32(`${env}@${snapshot.environments.get(env)?.createdAt ?? ''}`)
  for (const flag of views.values()) {
    const served = flag.servedRevision ?? flag.revision
    if (served > newest) newest = served
    digest = (digest ^ Bun.hash.crc32(`${flag.id}:${served}`)) >>> 0
  }
  return `e${newest}.${views.size}.${digest.toString(36)}`
}
