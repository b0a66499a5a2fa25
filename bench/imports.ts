/**
 * The import rows of `bun run bench` (docs/performance.md): 10,000 realistic flags of each of the four
 * tools flagd imports from (Unleash, LaunchDarkly, Flipt, GO Feature Flag), each imported whole by
 * `PUT /api/migrations?format=` into a fresh daemon in this process, answered by `http.handle`: the
 * body read, the file translated, the document validated and the store's commit, until the answer.
 * Wall and CPU time (every thread of this process) are reported as medians; on a shared machine the
 * CPU time is the figure load does not inflate. `bun bench/imports.ts [format…]` runs them alone.
 */

import { loadavg } from 'node:os'
import { systemPrincipal } from '../src/domain/principal.ts'
import { inProcessApp, type Row } from './fixture.ts'
import { fliptExportYaml } from './import-flipt.ts'
import { goFeatureFlagYaml } from './import-gofeatureflag.ts'
import { launchdarklyFlagData } from './import-launchdarkly.ts'
import { unleashExport } from './import-unleash.ts'

/** The four formats, in the order of docs/migrations.md. */
export const IMPORT_FORMATS = ['unleash', 'launchdarkly', 'flipt', 'gofeatureflag'] as const
/** One of them. */
export type ImportFormat = (typeof IMPORT_FORMATS)[number]

const RUNS = Number(process.env.BENCH_IMPORT_RUNS ?? 5)

/** The body of one format's import of `n` flags, and how it is sent. */
async function importRequest(format: ImportFormat, n: number): Promise<{ body: string; contentType: string; query: string }> {
  switch (format) {
    case 'unleash':
      return { body: JSON.stringify(unleashExport(n)), contentType: 'application/json', query: '&sourceEnvironment=production' }
    case 'launchdarkly':
      return {
        body: JSON.stringify(await launchdarklyFlagData(n)),
        contentType: 'application/json',
        query: '&sourceEnvironment=production',
      }
    case 'flipt':
      return { body: fliptExportYaml(n), contentType: 'application/yaml', query: '' }
    case 'gofeatureflag':
      return { body: goFeatureFlagYaml(n), contentType: 'application/yaml', query: '' }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number

/** One format's figures: wall and CPU ms per run, the flags created and skipped, the body's bytes. */
export interface ImportFigures {
  format: ImportFormat
  wallMs: number[]
  cpuMs: number[]
  flags: number
  skipped: number
  scheduled: number
  bytes: number
}

/** Imports `n` flags of `format` RUNS times, each into a fresh daemon; throws unless every import answers 200. */
export async function measureImport(format: ImportFormat, n: number): Promise<ImportFigures> {
  const { body, contentType, query } = await importRequest(format, n)
  const figures: ImportFigures = { format, wallMs: [], cpuMs: [], flags: 0, skipped: 0, scheduled: 0, bytes: Buffer.byteLength(body) }
  for (let run = 0; run < RUNS; run++) {
    const { app, close } = await inProcessApp(`flagd-bench-import-${format}-`)
    try {
      const cli = { principal: systemPrincipal('cli'), requestId: 'bench' }
      const { token } = await app.services.apiTokens.create(cli, { name: 'bench', permissions: ['migration:write', 'flag:write'] })
      Bun.gc(true) // the previous run's garbage is not this run's cost
      const cpu0 = process.cpuUsage()
      const t0 = performance.now()
      const res = await app.http.handle(
        new Request(`http://localhost/api/migrations?format=${format}${query}`, {
          method: 'PUT',
          headers: { 'x-api-key': token, 'content-type': contentType },
          body,
        }),
      )
      const answer = await res.text()
      figures.wallMs.push(performance.now() - t0)
      const cpu = process.cpuUsage(cpu0)
      figures.cpuMs.push((cpu.user + cpu.system) / 1000)
      if (res.status !== 200) throw new Error(`${format} import: ${res.status} ${answer.slice(0, 500)}`)
      const result = JSON.parse(answer) as { summary: { created: number }; skipped?: unknown[]; scheduled?: unknown[] }
      figures.flags = result.summary.created
      figures.skipped = result.skipped?.length ?? 0
      figures.scheduled = result.scheduled?.length ?? 0
    } finally {
      await close()
    }
  }
  return figures
}

/** The table's text of one format's figures. */
function resultText(f: ImportFigures, n: number): string {
  const list = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ')
  return `median ${median(f.wallMs).toFixed(0)} ms wall, ${median(f.cpuMs).toFixed(0)} ms CPU over ${f.wallMs.length} runs (wall ${list(f.wallMs)}; CPU ${list(f.cpuMs)}); ${n.toLocaleString('en')} flags in a ${(f.bytes / 2 ** 20).toFixed(1)} MiB file, ${f.flags.toLocaleString('en')} created, ${f.skipped.toLocaleString('en')} skipped (docs/migrations.md), ${f.scheduled.toLocaleString('en')} changes scheduled`
}

/** The four rows (see module comment). */
export async function importRows(row: Row, n = 10_000, formats: readonly ImportFormat[] = IMPORT_FORMATS): Promise<void> {
  for (const format of formats) {
    const loadBefore = loadavg()[0] ?? 0
    const f = await measureImport(format, n)
    row(
      `import of ${n.toLocaleString('en')} ${format} flags, whole (PUT /api/migrations?format=${format}: read, translate, validate, commit)`,
      `${resultText(f, n)}; load average ${loadBefore.toFixed(1)} before, ${loadavg()[0]?.toFixed(1)} after`,
      '< 2 s',
      median(f.wallMs) < 2000,
      { ...f, loadBefore, loadAfter: loadavg()[0] },
    )
  }
}

if (import.meta.main) {
  const asked = process.argv.slice(2).filter((a): a is ImportFormat => (IMPORT_FORMATS as readonly string[]).includes(a))
  await importRows(
    (s, r, g, met) => console.log(`${met ? 'ok  ' : 'MISS'} ${s}: ${r} (goal ${g})`),
    10_000,
    asked.length > 0 ? asked : IMPORT_FORMATS,
  )
}
