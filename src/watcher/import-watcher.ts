/**
 * The watched import folder (docs/migrations.md). chokidar events are only hints that trigger a scan; the
 * folder is also rescanned periodically, because events get lost. A `.json` (or another tool's `.yaml`, `.yml`, `.toml`) file not starting with
 * `.` is read once its size and mtime have not changed for `settleMs`, counted from the last change
 * seen; ready files are imported in name order, one at a time, through the same import engine as the
 * API, then moved to `processed/` (with the result) or `failed/` (with the error). Symbolic links and
 * non-regular files are refused.
 */

import { lstat, readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { type FSWatcher, watch } from 'chokidar'
import { type JsonProblem, MAX_JSON_DEPTH, readBoundedJson } from '../domain/bounded-json.ts'
import type { Clock } from '../domain/clock.ts'
import { AppError } from '../domain/errors.ts'
import { recogniseForeignFile, takesText } from '../domain/foreign/foreign-formats.ts'
import { readForeignText, syntaxOfFileName } from '../domain/foreign/foreign-text.ts'
import type { ImportMode, ImportValues } from '../domain/migration-plan.ts'
import { newId } from '../domain/new-id.ts'
import { systemPrincipal } from '../domain/principal.ts'
import type { ImportResult, MigrationService } from '../services/migration-service.ts'
import { NO_TELEMETRY, type Telemetry } from '../services/telemetry.ts'
import { moveBadlyNamed, moveWithReport, prepareDropFolder, RefusedFile, readDroppedFile } from './drop-folder.ts'

/** Settings of the watcher (from config `import.*`). */
export interface ImportWatcherOptions {
  watchDir: string
  settleMs: number
  rescanMs: number
  mode: ImportMode
  values: ImportValues
  /** The environment files import into (config `import.environment`); absent: the default one. */
  environment?: string
  maxBytes: number
  now: Clock
  log?: (line: string) => void
  /** Where failures go (a refused or unreadable file, a failed scan): `warn`, so alerting on warnings sees them. */
  warn?: (line: string) => void
  /** Counts files refused before the import engine sees them (the engine counts the rest). */
  telemetry?: Telemetry
}

/** A running watcher. */
export interface ImportWatcher {
  start(): Promise<void>
  /** Stops watching and waits for the file being imported, if any. */
  stop(): Promise<void>
  /** Runs one scan now (tests, and after events). */
  scan(): Promise<void>
}

interface Seen {
  size: number
  mtimeMs: number
  since: number
}

const RESERVED_DIRS = new Set(['processed', 'failed'])
const FILE_PROBLEMS: Record<JsonProblem, string> = {
  'too-deep': `the file is nested deeper than ${MAX_JSON_DEPTH} levels`,
  'not-utf8': 'the file is not valid UTF-8',
  empty: 'the file is not valid JSON',
  'not-json': 'the file is not valid JSON',
}

function errorReport(err: unknown): { code: string; message: string; details?: Record<string, unknown> } {
  if (err instanceof AppError) return { code: err.code, message: err.message, ...(err.details ? { details: err.details } : {}) }
  return { code: 'INTERNAL', message: 'the file could not be imported' }
}

/** Creates the watcher over the import engine. */
export function createImportWatcher(migrations: MigrationService, options: ImportWatcherOptions): ImportWatcher {
  const now = options.now
  const log = options.log ?? (() => {})
  const warn = options.warn ?? log
  const seen = new Map<string, Seen>()
  const telemetry = options.telemetry ?? NO_TELEMETRY
  /** Files applied but not yet moved (never to be imported twice), and files that could not be handled. */
  const imported = new Set<string>()
  const stuck = new Set<string>()
  let fsWatcher: FSWatcher | undefined
  let timer: ReturnType<typeof setInterval> | undefined
  let settleTimer: ReturnType<typeof setTimeout> | undefined
  let running: Promise<void> | undefined
  let again = false
  let stopped = false

  async function fail(name: string, error: { code: string; message: string; details?: Record<string, unknown> }): Promise<void> {
    const at = now()
    const moved = await moveWithReport(options.watchDir, name, 'failed', at, 'error.json', { file: name, at: at.toISOString(), error })
    seen.delete(name)
    warn(`import of ${name} failed (${error.code}: ${error.message}); moved to failed/${moved}`)
  }

  /** Refuses a file before it reaches the import engine (which reports its own outcomes). */
  async function refuse(name: string, code: string, message: string): Promise<void> {
    telemetry.importFinished({ source: 'drop-folder', outcome: 'invalid', error: message, origin: name })
    await fail(name, { code, message })
  }

  async function importFile(name: string): Promise<void> {
    let bytes: Uint8Array
    try {
      bytes = await readDroppedFile(join(options.watchDir, name), options.maxBytes)
    } catch (err) {
      if (err instanceof RefusedFile)
        return refuse(name, err.message.includes('larger') ? 'PAYLOAD_TOO_LARGE' : 'INVALID_REQUEST', err.message)
      return refuse(name, 'INVALID_REQUEST', 'the file is not valid JSON')
    }
    const syntax = syntaxOfFileName(name) ?? 'json'
    let raw: unknown
    if (syntax === 'json') {
      // depth is checked on the bytes before parsing, as for an upload (docs/api.md#conventions)
      const read = readBoundedJson(bytes)
      if (!read.ok) return refuse(name, 'INVALID_REQUEST', FILE_PROBLEMS[read.problem])
      raw = read.value
    } else {
      const read = readForeignText(bytes, syntax)
      if (!read.ok) return refuse(name, 'INVALID_REQUEST', `the file is ${read.reason}`)
      raw = read.value
    }
    // another tool's file is recognised by its content (docs/migrations.md#from-other-tools)
    const format = recogniseForeignFile(raw)
    if (syntax !== 'json' && (format === undefined || !takesText(format)))
      return refuse(
        name,
        'INVALID_REQUEST',
        `a ${syntax.toUpperCase()} file is imported as a Flipt or GO Feature Flag file only, and this one is neither`,
      )
    let result: ImportResult
    try {
      const caller = { principal: systemPrincipal('drop-folder'), requestId: newId('drop') }
      result = await migrations.importDocument(
        caller,
        raw,
        {
          mode: options.mode,
          values: options.values,
          dryRun: false,
          ...(options.environment !== undefined ? { environment: options.environment } : {}),
          ...(format !== undefined ? { format } : {}),
        },
        'drop-folder',
        name,
      )
    } catch (err) {
      return fail(name, errorReport(err))
    }
    // Applied: from here on the file must never be imported again, even if it cannot be moved.
    imported.add(name)
    const moved = await moveWithReport(options.watchDir, name, 'processed', now(), 'result.json', result)
    imported.delete(name)
    seen.delete(name)
    const s = result.summary
    // flags of another tool's file that could not be carried are easy to miss: say so (docs/migrations.md#from-other-tools)
    const skipped = result.skipped.length > 0 ? `; ${result.skipped.length} skipped (listed in processed/${moved}.result.json)` : ''
    log(
      `imported ${name}: ${s.created} created, ${s.updated} updated, ${s.deleted} deleted, ${s.unchanged} unchanged; moved to processed/${moved}${skipped}`,
    )
  }

  async function scanOnce(): Promise<void> {
    for (const moved of await moveBadlyNamed(options.watchDir, now()))
      warn(`a drop file whose name is not valid UTF-8 was moved to failed/${moved}; rename it and drop it again`)
    const at = now().getTime() // the watcher's clock: tests move it past the settle time instead of sleeping
    const ready: string[] = []
    let waiting = false
    const entries = await readdir(options.watchDir, { withFileTypes: true }).catch(() => [])
    const present = new Set<string>()
    for (const entry of entries) {
      const name = entry.name
      if (name.startsWith('.') || syntaxOfFileName(name) === undefined || (entry.isDirectory() && RESERVED_DIRS.has(name))) continue
      present.add(name)
      const info = await lstat(join(options.watchDir, name)).catch(() => undefined)
      if (!info) continue
      if (info.isSymbolicLink() || !info.isFile()) {
        await fail(name, {
          code: 'INVALID_REQUEST',
          message: info.isSymbolicLink() ? 'symbolic links are refused; drop the file itself' : 'not a regular file',
        })
        continue
      }
      const prev = seen.get(name)
      if (!prev || prev.size !== info.size || prev.mtimeMs !== info.mtimeMs) {
        seen.set(name, { size: info.size, mtimeMs: info.mtimeMs, since: at })
        waiting = true
      } else if (at - prev.since >= options.settleMs) ready.push(name)
      else waiting = true
    }
    for (const name of seen.keys()) if (!present.has(name)) seen.delete(name)
    for (const name of ready.sort()) {
      if (stopped) return
      if (imported.has(name) || stuck.has(name)) continue
      try {
        await importFile(name)
      } catch (err) {
        // one bad file never holds up the ones after it, and is not tried again
        stuck.add(name)
        seen.delete(name)
        warn(
          `${name} could not be ${imported.has(name) ? 'moved or reported after it was imported' : 'processed'} (${(err as Error).message}); it stays in ${options.watchDir} and will not be read again until flagd restarts; move it away by hand`,
        )
      }
    }
    if (waiting && !stopped) {
      clearTimeout(settleTimer)
      settleTimer = setTimeout(() => void scan(), options.settleMs + 20)
    }
  }

  function scan(): Promise<void> {
    if (running) {
      again = true
      return running
    }
    running = (async () => {
      do {
        again = false
        await scanOnce().catch((err) => warn(`scanning ${options.watchDir} failed: ${(err as Error).message}`))
      } while (again && !stopped)
      running = undefined
    })()
    return running
  }

  return {
    scan,
    async start() {
      await prepareDropFolder(options.watchDir)
      fsWatcher = watch(options.watchDir, {
        depth: 0,
        ignoreInitial: true,
        ignored: (p) => /[/\\](processed|failed)([/\\]|$)/.test(p.slice(options.watchDir.length)),
      })
      fsWatcher.on('all', () => void scan())
      fsWatcher.on('error', () => {})
      timer = setInterval(() => void scan(), options.rescanMs)
      void scan()
    },
    async stop() {
      stopped = true
      clearInterval(timer)
      clearTimeout(settleTimer)
      await fsWatcher?.close()
      await running
    },
  }
}
