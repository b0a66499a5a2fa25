/**
 * Import and export (docs/migrations.md, docs/ui.md): an import is always previewed first (a dry run listing what
 * would be created, updated and deleted, with warnings and every error), and applied only from that
 * preview; the export downloads as the service names it.
 */

import { useRef, useState } from 'preact/hooks'
import { api, type Body, messageOf } from './api.ts'

type Result = {
  dryRun: boolean
  summary: { created: number; updated: number; deleted: number; unchanged: number }
  changes: { name: string; action: string; fields: string[]; diff?: Record<string, { before?: unknown; after?: unknown }> }[]
  warnings: { field: string; reason: string }[]
  backup: string | null
}
type Problem = { message: string; errors: { field: string; reason: string }[]; count: number }

/** A picked file's text as the import's typed body, or undefined when it is not JSON at all. */
function parsedFile(text: string): Body<'importMigration'> | undefined {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

function problemOf(error: unknown): Problem {
  const details = (error as { error?: { details?: { errors?: { field: string; reason: string }[]; errorCount?: number } } })?.error?.details
  return { message: messageOf(error), errors: details?.errors ?? [], count: details?.errorCount ?? details?.errors?.length ?? 0 }
}

/** Downloads the export (a migration file, or OpenFeature flagd's document) under the name the service gives it. */
async function downloadExport(format: 'migration' | 'flagd'): Promise<string | null> {
  const query = format === 'flagd' ? { params: { query: { format: 'flagd' as const } } } : {}
  const { data, error, response } = await api.GET('/api/migrations/export', { ...query, parseAs: 'blob' })
  if (!data) return messageOf(error, `export failed (${response.status})`)
  const name = /filename="([^"]+)"/.exec(response.headers.get('content-disposition') ?? '')?.[1] ?? `flagd_${format}.json`
  const url = URL.createObjectURL(data as Blob)
  const a = Object.assign(document.createElement('a'), { href: url, download: name })
  document.body.append(a)
  a.click()
  a.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
  return null
}

export function MigrationsPage({ canExport, canImport }: { canExport: boolean; canImport: boolean }) {
  const [file, setFile] = useState<File | null>(null)
  const [url, setUrl] = useState('')
  const picker = useRef<HTMLInputElement>(null)
  const [mode, setMode] = useState<'merge' | 'replace'>('merge')
  const [values, setValues] = useState<'overwrite' | 'keep'>('overwrite')
  const [preview, setPreview] = useState<Result | null>(null)
  const [applied, setApplied] = useState<Result | null>(null)
  const [problem, setProblem] = useState<Problem | null>(null)
  const [exportError, setExportError] = useState<string | null>(null)
  const reset = () => {
    setPreview(null)
    setApplied(null)
    setProblem(null)
  }

  async function run(dryRun: boolean) {
    setProblem(null)
    // read at each run, not when chosen: a file edited and previewed again is read afresh
    let text = ''
    if (!url.trim() && file) {
      try {
        text = await file.text()
      } catch {
        return setProblem({
          message: `${file.name} cannot be read any more (changed since it was chosen?): choose it again`,
          errors: [],
          count: 0,
        })
      }
    }
    const query = { mode, values, dryRun, diff: dryRun }
    const document = url.trim() ? undefined : parsedFile(text)
    if (!url.trim() && document === undefined) {
      return setProblem({ message: `${file?.name ?? 'the file'} is not valid JSON: choose a migration file`, errors: [], count: 0 })
    }
    const { data, error } = document
      ? // the file goes to the service byte for byte; the service checks it and names every problem
        await api.PUT('/api/migrations', { params: { query }, body: document, bodySerializer: () => text })
      : await api.PATCH('/api/migrations', { params: { query }, body: { url: url.trim() } })
    if (!data) {
      setProblem(problemOf(error))
      setPreview(null)
      return
    }
    if (dryRun) {
      setPreview(data as Result)
    } else {
      setApplied(data as Result)
      setPreview(null)
      setFile(null)
      if (picker.current) picker.current.value = ''
    }
  }

  return (
    <section class="page">
      <h1>Import and export</h1>
      {canExport && (
        <div class="actions">
          <button type="button" onClick={async () => setExportError(await downloadExport('migration'))}>
            Download export
          </button>
          <button type="button" onClick={async () => setExportError(await downloadExport('flagd'))}>
            Download as flagd document
          </button>
          {exportError && (
            <p class="error" role="alert">
              {exportError}
            </p>
          )}
        </div>
      )}
      {canImport && (
        <form
          onSubmit={(e) => {
            e.preventDefault()
            void run(true)
          }}
        >
          <h2>Import</h2>
          <div class="field">
            <label for="im-file">Migration file</label>
            <input
              id="im-file"
              ref={picker}
              type="file"
              accept=".json,application/json"
              onChange={(e) => {
                reset()
                setFile(e.currentTarget.files?.[0] ?? null)
              }}
            />
          </div>
          <div class="field">
            <label for="im-url">Or from a URL</label>
            <input
              id="im-url"
              type="url"
              value={url}
              placeholder="https://…/flags.json"
              onInput={(e) => {
                reset()
                setUrl(e.currentTarget.value)
              }}
            />
          </div>
          <div class="field">
            <label for="im-mode">Mode</label>
            <select
              id="im-mode"
              value={mode}
              onChange={(e) => {
                reset()
                setMode(e.currentTarget.value as 'merge')
              }}
            >
              <option value="merge">merge: create and update the flags in the file</option>
              <option value="replace">replace: also delete flags the file does not name</option>
            </select>
          </div>
          <div class="field">
            <label for="im-values">Values</label>
            <select
              id="im-values"
              value={values}
              onChange={(e) => {
                reset()
                setValues(e.currentTarget.value as 'keep')
              }}
            >
              <option value="overwrite">overwrite: take the file's values</option>
              <option value="keep">keep: keep the values flags have here</option>
            </select>
          </div>
          <button type="submit" disabled={!file && !url.trim()}>
            Preview changes
          </button>
        </form>
      )}
      {problem && (
        <div class="error" role="alert">
          <p>{problem.message}</p>
          {problem.errors.length > 0 && (
            <ul class="problems">
              {problem.errors.map((e) => (
                <li key={e.field}>
                  <code>{e.field}</code>: {e.reason}
                </li>
              ))}
            </ul>
          )}
          {problem.count > problem.errors.length && <p>… and {problem.count - problem.errors.length} more</p>}
        </div>
      )}
      {preview && <ImportResult result={preview} />}
      {preview && (
        <div class="actions">
          <button type="button" onClick={() => run(false)} disabled={preview.changes.length === 0}>
            Apply import
          </button>
          <button type="button" class="plain" onClick={reset}>
            Cancel
          </button>
        </div>
      )}
      {applied && <ImportResult result={applied} />}
    </section>
  )
}

/** An update's changed fields as "field old → new", when the service sent its values. */
function diffText(change: Result['changes'][number]): string | undefined {
  if (!change.diff) return undefined
  const show = (v: unknown) => (v === undefined ? '–' : JSON.stringify(v))
  return Object.entries(change.diff)
    .map(([field, d]) => `${field} ${show(d.before)} → ${show(d.after)}`)
    .join('; ')
}

function ImportResult({ result }: { result: Result }) {
  const { created, updated, deleted, unchanged } = result.summary
  const verb = result.dryRun ? 'Would' : 'Did'
  return (
    <div class="import-result" role="status">
      <h2>{result.dryRun ? 'Preview (nothing changed yet)' : 'Imported'}</h2>
      <p>
        {verb} create {created}, update {updated}, delete {deleted}; {unchanged} unchanged.
        {result.backup ? ` Backup of the flags before: ${result.backup}` : ''}
      </p>
      {result.changes.length > 0 && (
        <ul class="changes">
          {result.changes.map((c) => (
            <li key={c.name}>
              <span class={`action ${c.action}`}>{c.action}</span> <code>{c.name}</code>
              {diffText(c) ? `: ${diffText(c)}` : c.fields.length > 0 && ` (${c.fields.join(', ')})`}
            </li>
          ))}
        </ul>
      )}
      {result.warnings.length > 0 && (
        <ul class="warnings">
          {result.warnings.map((w) => (
            <li key={w.field}>
              warning: <code>{w.field}</code> {w.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}
