/**
 * The LaunchDarkly import's bench row (docs/migrations.md#from-launchdarkly): 10,000 flags of
 * LaunchDarkly's flag data (the test fixture's flags, each copied under new keys with its
 * prerequisites, targets of 20 users, and the fixture's segments) translated and then parsed and
 * validated as a migration document, as an import does before it writes. Prints the median of 5
 * runs. Run: `bun bench/import-launchdarkly.ts`.
 */

import { join } from 'node:path'
import { translateLaunchdarkly } from '../src/domain/foreign/launchdarkly-translator.ts'
import { parseImportDocument } from '../src/domain/import-document.ts'

const FLAGS = 10_000
const RUNS = 5

/** LaunchDarkly flag data with `count` flags copied from the fixture's. */
async function flagData(count: number): Promise<Record<string, unknown>> {
  const fixture = JSON.parse(await Bun.file(join(import.meta.dir, '../test/fixtures/foreign/launchdarkly/flag-data.json')).text())
  const shapes = Object.values(fixture.flags as Record<string, Record<string, unknown>>)
  const flags: Record<string, unknown> = {}
  for (let i = 0; flags && Object.keys(flags).length < count; i++) {
    const shape = shapes[i % shapes.length] as Record<string, unknown>
    const copy = i / shapes.length
    const key = `${shape.key as string}-${Math.floor(copy)}`
    const users = Array.from({ length: 20 }, (_, u) => `user-${i}-${u}`)
    flags[key] = {
      ...shape,
      key,
      targets: [{ variation: 0, values: users }],
      prerequisites: ((shape.prerequisites ?? []) as { key: string; variation: number }[]).map((p) => ({
        ...p,
        key: `${p.key}-${Math.floor(copy)}`,
      })),
    }
  }
  return { flags, segments: fixture.segments }
}

const raw = await flagData(FLAGS)
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1] as number
const cpuMs = () => {
  const u = process.cpuUsage()
  return (u.user + u.system) / 1000
}
const wall: number[] = []
const cpu: number[] = []
const translating: number[] = []
let carried = 0
for (let run = 0; run < RUNS; run++) {
  const started = performance.now()
  const startedCpu = cpuMs()
  const t = translateLaunchdarkly(raw, { nowMs: Date.parse('2026-12-01T09:00:00Z') })
  if ('problems' in t) throw new Error(JSON.stringify(t.problems))
  translating.push(cpuMs() - startedCpu)
  const document = {
    environment: 'production',
    version: '1.0.0',
    createdAt: '2026-12-01T09:00:00.000Z',
    flags: t.flags,
    segments: t.segments,
  }
  // prerequisites are checked by the import itself (docs/api.md#prerequisites), not by the document's parse
  for (const f of Object.values(document.flags)) delete f.prerequisites
  const parsed = parseImportDocument(document)
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems.slice(0, 3)))
  wall.push(performance.now() - started)
  cpu.push(cpuMs() - startedCpu)
  carried = Object.keys(t.flags).length
}
// the CPU time is what the machine's load does not inflate: on a shared machine it is the figure to read
console.log(
  `import of ${FLAGS.toLocaleString('en')} LaunchDarkly flags (${carried} carried): ${median(wall).toFixed(0)} ms wall, ${median(cpu).toFixed(0)} ms CPU of which translation ${median(translating).toFixed(0)} ms (medians of ${RUNS}; goal < 2,000 ms)`,
)
