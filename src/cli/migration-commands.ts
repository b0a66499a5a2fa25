/** `flagd export`, `flagd import FILE` and the offline `flagd validate FILE`. */

import { readFile } from 'node:fs/promises'
import { resolve } from 'node:path'
import { defineCommand } from 'citty'
import { MAX_JSON_DEPTH, readBoundedJson } from '../domain/bounded-json.ts'
import { AppError, type FieldProblem } from '../domain/errors.ts'
import { exportText } from '../domain/export-document.ts'
import { takesText } from '../domain/foreign/foreign-formats.ts'
import { readForeignText, syntaxOfFileName } from '../domain/foreign/foreign-text.ts'
import { FOREIGN_FORMATS, type ForeignFormat } from '../domain/foreign/foreign-translation.ts'
import { parseImportDocument } from '../domain/import-document.ts'
import { writeFileAtomic } from '../io/atomic-write.ts'
import type { ImportResult } from '../services/migration-service.ts'
import type { ScheduledImportResult } from '../services/scheduled-import.ts'
import { configArgs, withAdmin } from './common-args.ts'
import { countNoun } from './count-noun.ts'
import { UsageError } from './usage-error.ts'

/** What a valid document holds, in words. */
function validSummary(d: {
  flags: ReadonlyMap<string, unknown>
  segments: ReadonlyMap<string, unknown>
  source: { environment: string; version: string; format?: string }
}): string {
  const segments = d.segments.size > 0 ? ` and ${countNoun(d.segments.size, 'segment')}` : ''
  return d.source.format === 'flagd'
    ? `an OpenFeature flagd document with ${countNoun(d.flags.size, 'flag')}${segments}`
    : `${countNoun(d.flags.size, 'flag')}${segments} from environment ${d.source.environment} (format ${d.source.version})`
}

/** Reads a file's bytes, with errors a person can act on. */
async function readBytes(path: string): Promise<Uint8Array> {
  try {
    return await readFile(path)
  } catch (err) {
    throw new Error(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (err as Error).message}`)
  }
}

/** Reads another tool's file: YAML or TOML by its name's ending when the tool writes them, else JSON (docs/migrations.md#from-other-tools). */
async function readForeignFile(path: string, format: ForeignFormat): Promise<unknown> {
  const named = syntaxOfFileName(path)
  const syntax = takesText(format) && named !== undefined ? named : 'json'
  const read = readForeignText(await readBytes(path), syntax)
  if (!read.ok) throw new Error(`${path} is ${read.reason}`)
  return read.value
}

/** Reads and parses a JSON file, with errors a person can act on. */
async function readJsonFile(path: string): Promise<unknown> {
  const bytes = await readBytes(path)
  // the depth bound of every imported document, checked before parsing (docs/api.md#conventions)
  const read = readBoundedJson(bytes)
  if (read.ok) return read.value
  if (read.problem === 'too-deep') throw new Error(`${path} is nested deeper than ${MAX_JSON_DEPTH} levels`)
  // a YAML or TOML file is another tool's: say which formats read it (docs/migrations.md#from-other-tools)
  const syntax = syntaxOfFileName(path)
  if (syntax !== undefined && syntax !== 'json')
    throw new Error(
      `${path} is ${syntax.toUpperCase()}, not JSON: flagd reads YAML and TOML from Flipt and GO Feature Flag, add --format flipt or --format gofeatureflag`,
    )
  throw new Error(read.problem === 'not-utf8' ? `${path} is not valid UTF-8` : `${path} is not valid JSON`)
}

function problemLines(problems: readonly FieldProblem[]): string {
  return problems.map((p) => `  ${p.field}: ${p.reason}`).join('\n')
}

function oneOf<T extends string>(name: string, value: string | undefined, allowed: readonly T[], fallback: T): T {
  if (value === undefined) return fallback
  if (!(allowed as readonly string[]).includes(value)) throw new UsageError(`--${name} must be one of ${allowed.join(', ')}`)
  return value as T
}

function summary(result: ImportResult): string {
  const s = result.summary
  const lines = [
    `${result.dryRun ? 'dry run: would apply' : 'applied'}: ${s.created} created, ${s.updated} updated, ${s.deleted} deleted, ${s.unchanged} unchanged`,
  ]
  for (const c of result.changes)
    lines.push(`  ${c.action.padEnd(6)} ${c.name}${c.fields.length && c.action === 'update' ? ` (${c.fields.join(', ')})` : ''}`)
  if (result.backup) lines.push(`backup: backups/${result.backup}`)
  // docs/migrations.md#dry-runs
  if (result.applyError) lines.push(`applying it would be refused: ${result.applyError.message}`)
  return lines.join('\n')
}

export const exportCommand = defineCommand({
  meta: { name: 'export', description: "Write all flags as a migration file, or as OpenFeature flagd's document (stdout, or --out FILE)" },
  args: {
    out: { type: 'string', description: 'File to write (atomically) instead of stdout' },
    format: { type: 'string', description: "migration (default: flagd's own migration file) or flagd (OpenFeature flagd's flag document)" },
    environment: { type: 'string', description: 'Whose flag states to export (default: the default environment)' },
    ...configArgs,
  },
  async run({ args }) {
    const format = oneOf('format', args.format, ['migration', 'flagd'] as const, 'migration')
    const env = args.environment === undefined ? null : String(args.environment)
    const { text, fileName, count } =
      format === 'flagd'
        ? await withAdmin(args, async (admin) => {
            const { text, fileName, flags } = await admin.exportFlagd(env)
            return { text, fileName, count: flags }
          })
        : await withAdmin(args, async (admin) => {
            const { document, fileName } = await admin.exportDocument(env)
            return { text: exportText(document), fileName, count: Object.keys(document.flags).length }
          })
    if (args.out) {
      await writeFileAtomic(resolve(args.out), text)
      console.error(`wrote ${countNoun(count, 'flag')} to ${args.out} (suggested name ${fileName})`)
    } else process.stdout.write(text)
  },
})

export const importCommand = defineCommand({
  meta: { name: 'import', description: "Import a migration file (or another tool's, with --format) into the data directory" },
  args: {
    file: { type: 'positional', description: "Migration file (JSON), or another tool's file with --format", required: true },
    mode: { type: 'string', description: 'merge (default) or replace (also delete flags the file does not name)' },
    values: { type: 'string', description: 'overwrite (default) or keep (leave current values of existing flags)' },
    'dry-run': { type: 'boolean', description: 'Show what would change, change nothing' },
    environment: {
      type: 'string',
      description: "Environment whose state the file's per-environment fields set (default: the default environment)",
    },
    format: {
      type: 'string',
      description: `Another tool's file, translated first: ${FOREIGN_FORMATS.join(', ')} (flipt and gofeatureflag: also .yaml, .yml, .toml)`,
    },
    'source-environment': {
      type: 'string',
      description: "With --format: the tool's environment (Flipt: namespace) to read; default the first",
    },
    json: { type: 'boolean', description: 'Print the result as JSON' },
    ...configArgs,
  },
  async run({ args }) {
    const mode = oneOf('mode', args.mode, ['merge', 'replace'] as const, 'merge')
    const environment = args.environment === undefined ? {} : { environment: String(args.environment) }
    const values = oneOf('values', args.values, ['overwrite', 'keep'] as const, 'overwrite')
    const format = args.format === undefined ? undefined : oneOf('format', String(args.format), FOREIGN_FORMATS, 'flipt')
    if (format === undefined && args['source-environment'] !== undefined) throw new UsageError('--source-environment needs --format')
    const foreign =
      format === undefined
        ? {}
        : { format, ...(args['source-environment'] !== undefined ? { sourceEnvironment: String(args['source-environment']) } : {}) }
    const raw = format === undefined ? await readJsonFile(String(args.file)) : await readForeignFile(String(args.file), format)
    try {
      const result = await withAdmin(args, (admin) =>
        admin.importDocument(raw, { mode, values, dryRun: Boolean(args['dry-run']), ...environment, ...foreign }),
      )
      console.log(args.json ? JSON.stringify(result, null, 2) : summary(result))
      if (!args.json) {
        for (const w of result.warnings) console.error(`warning: ${w.field}: ${w.reason}`)
        for (const s of result.skipped) console.error(`skipped: ${s.name}: ${s.reason}`)
        for (const s of result.scheduled ?? []) console.log(scheduledLine(s))
      }
    } catch (err) {
      const problems = err instanceof AppError ? (err.details?.errors as FieldProblem[] | undefined) : undefined
      if (problems) throw new Error(`${args.file} was not imported, ${problems.length} problem(s):\n${problemLines(problems)}`)
      throw err
    }
  },
})

/** One later change of the import (docs/migrations.md#changes-a-later-time-brings) as a line. */
function scheduledLine(s: ScheduledImportResult): string {
  const request = s.changeRequest === null ? 'a change request would be made' : `change request ${s.changeRequest}`
  return `scheduled: ${s.flag} at ${s.at}: ${request} (${s.state})${s.note === undefined ? '' : `: ${s.note}`}`
}

export const validateCommand = defineCommand({
  meta: { name: 'validate', description: 'Check a migration file offline (no daemon, no data directory); exit 0 valid, 1 invalid' },
  args: { file: { type: 'positional', description: 'Migration file (JSON)', required: true } },
  async run({ args }) {
    const result = parseImportDocument(await readJsonFile(String(args.file)))
    if (!result.ok) throw new Error(`${args.file} is not valid, ${result.problems.length} problem(s):\n${problemLines(result.problems)}`)
    console.log(`${args.file} is valid: ${validSummary(result.document)}`)
    for (const w of result.document.warnings) console.error(`warning: ${w.field}: ${w.reason}`)
  },
})
