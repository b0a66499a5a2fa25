/**
 * The GO Feature Flag import row (docs/migrations.md#from-go-feature-flag): a flag file of 10,000
 * realistic flags (YAML: variations, targeting queries, splits, progressive rollouts, scheduled
 * steps, metadata) read, translated and checked as a migration document. Prints the median of 5
 * runs. Goal: well under 2 s, the import's own write included. Run: `bun bench/import-gofeatureflag.ts`.
 */

import type { ForeignTranslation } from '../src/domain/foreign/foreign-translation.ts'
import { translateGoFeatureFlag } from '../src/domain/foreign/gofeatureflag-translator.ts'
import { parseImportDocument } from '../src/domain/import-document.ts'

const FLAGS = 10_000
const RUNS = 5
const NOW = Date.parse('2026-12-07T12:00:00Z')

/** One flag of the file, of one of five shapes. */
function flagYaml(i: number): string {
  const head = `team${i % 40}-feature-${i}:\n  metadata:\n    description: Feature ${i} of team ${i % 40}\n    owner: team${i % 40}\n`
  switch (i % 5) {
    case 0:
      return `${head}  variations:\n    on: true\n    off: false\n  targeting:\n    - name: beta\n      query: plan eq "pro" and (beta eq true or seats gt ${i % 50})\n      variation: on\n    - query: country in ["FR", "DE", "IT"]\n      variation: off\n  defaultRule:\n    variation: off\n`
    case 1:
      return `${head}  variations:\n    a: "variant-a"\n    b: "variant-b"\n    c: "variant-c"\n  defaultRule:\n    percentage:\n      a: 33.333\n      b: 33.333\n      c: 33.334\n`
    case 2:
      return `${head}  variations:\n    old: false\n    new: true\n  defaultRule:\n    progressiveRollout:\n      initial:\n        variation: old\n        date: 2026-12-01T00:00:00Z\n      end:\n        variation: new\n        percentage: 100\n        date: 2027-01-01T00:00:00Z\n`
    case 3:
      return `${head}  variations:\n    low: 10\n    high: 100\n  targeting:\n    - query: appVersion ge 2.${i % 9}.0 or age lt 18\n      variation: high\n  defaultRule:\n    variation: low\n  scheduledRollout:\n    - date: 2026-11-01T00:00:00Z\n      disable: false\n    - date: 2027-02-01T00:00:00Z\n      defaultRule:\n        variation: high\n`
    default:
      return `${head}  variations:\n    v1: { limit: 10, engine: classic }\n    v2: { limit: 25, engine: vector }\n  bucketingKey: companyId\n  targeting:\n    - query: role eq "admin" and not (email ew ".org")\n      percentage:\n        v1: 20\n        v2: 80\n  defaultRule:\n    variation: v1\n`
  }
}

const text = Array.from({ length: FLAGS }, (_, i) => flagYaml(i)).join('\n')
const phases = { read: [] as number[], translate: [] as number[], check: [] as number[], total: [] as number[], cpu: [] as number[] }
let last: ForeignTranslation | undefined
for (let run = 0; run < RUNS; run++) {
  const cpu0 = process.cpuUsage()
  const t0 = performance.now()
  const raw = Bun.YAML.parse(text)
  const t1 = performance.now()
  const t = translateGoFeatureFlag(raw, { nowMs: NOW }) as ForeignTranslation
  const t2 = performance.now()
  const parsed = parseImportDocument({
    environment: 'production',
    version: '1.0.0',
    createdAt: new Date(NOW).toISOString(),
    flags: t.flags,
  })
  const t3 = performance.now()
  if (!parsed.ok) throw new Error(JSON.stringify(parsed.problems.slice(0, 3)))
  phases.read.push(t1 - t0)
  phases.translate.push(t2 - t1)
  phases.check.push(t3 - t2)
  phases.total.push(t3 - t0)
  const cpu = process.cpuUsage(cpu0)
  // CPU time as well: on a shared machine the wall clock counts the waits for a core
  phases.cpu.push((cpu.user + cpu.system) / 1000)
  last = t
}
const median = (xs: number[]) => ([...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number).toFixed(0)
console.log(
  `import-gofeatureflag: ${FLAGS} flags (${Object.keys(last?.flags ?? {}).length} imported, ${last?.skipped.length} skipped, ${last?.scheduled.length} scheduled), median of ${RUNS} runs: ` +
    `YAML ${median(phases.read)} ms + translate ${median(phases.translate)} ms + check ${median(phases.check)} ms = ${median(phases.total)} ms wall, ${median(phases.cpu)} ms CPU (goal < 2000 ms)`,
)
