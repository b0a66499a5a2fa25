/**
 * What an import from another tool makes of its file (docs/migrations.md#from-other-tools): the
 * flags and segments of a migration file, which then pass the same validation as any import, and
 * what could not be carried, said per flag. One translator per tool (`unleash`, `launchdarkly`,
 * `flipt`, `gofeatureflag`) fills it; nothing is ever half-translated: a flag is either in `flags`
 * with its meaning kept, or in `skipped` with the reason.
 */

import type { FieldProblem } from '../errors.ts'

/** The formats of other tools an import takes. */
export const FOREIGN_FORMATS = ['unleash', 'launchdarkly', 'flipt', 'gofeatureflag'] as const

/** One of `FOREIGN_FORMATS`. */
export type ForeignFormat = (typeof FOREIGN_FORMATS)[number]

/** A flag of the tool that is not imported, by the tool's own key, and why. */
export interface SkippedFlag {
  name: string
  reason: string
}

/** A change a later time brings (GO Feature Flag's future `scheduledRollout` steps): a scheduled change request. */
export interface ScheduledImport {
  /** The flag's name as imported. */
  flag: string
  /** ISO 8601 instant. */
  at: string
  /** The fields the step sets, as `PATCH /api/flags/{name}` takes them. */
  changes: Record<string, unknown>
}

/** A translated file (see module comment). */
export interface ForeignTranslation {
  /** Flag name (valid, mapped: `foreignFlagName`) → its definition as a migration file writes it. */
  flags: Record<string, Record<string, unknown>>
  /** Segment name → `{description, rule}` as a migration file writes it. */
  segments: Record<string, { description: string; rule: unknown }>
  skipped: SkippedFlag[]
  warnings: FieldProblem[]
  scheduled: ScheduledImport[]
  /** The tool's environment (or namespace) read, when the file names one: the answer's `source.environment`. */
  environment?: string
}

/** What a translator is told: the tool's environment asked for (`?sourceEnvironment=`) and the time now (ms). */
export interface TranslateOptions {
  sourceEnvironment?: string
  nowMs: number
}

/** A translator: the file's parsed content in, a translation out, or the problems that make the file unreadable as a whole. */
export type Translator = (raw: unknown, options: TranslateOptions) => ForeignTranslation | { problems: FieldProblem[] }
