/**
 * `bun bench/served-snapshot.ts`: what one served snapshot costs to build (docs/decisions/0007-one-snapshot-per-revision.md),
 * in process, over a file store of 1,000 flags (every tenth with a rule) and three environments:
 * the build alone (flags, names, ETag start, targeting scan), the build after one flag changed
 * (compiled parts carried over), every rule compiled and the flagd document encoded for sync; and
 * a commit's own time, for scale. Prints medians of ROUNDS (default 41) in milliseconds.
 */

import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Flag } from '../src/domain/flag.ts'
import { systemPrincipal } from '../src/domain/principal.ts'
import { createEnvironmentService } from '../src/services/environment-service.ts'
import { flagsIn } from '../src/services/environment-views.ts'
import { createFlagService } from '../src/services/flag-service.ts'
import { createMigrationService } from '../src/services/migration-service.ts'
import { createServedSnapshots } from '../src/services/served-snapshot.ts'
import { openJsonFileStore } from '../src/storage/json-file-store.ts'
import { systemClock } from '../src/system-clock.ts'
import { flagDocument } from './fixture.ts'
import { spread } from './wrk.ts'

const ROUNDS = Number(process.env.ROUNDS ?? 41)
const dir = mkdtempSync(join(tmpdir(), 'flagd-served-'))
const store = await openJsonFileStore({ now: systemClock, dataDir: dir })
const caller = { principal: systemPrincipal('cli'), requestId: 'bench' }
const environments = createEnvironmentService(store, 'development', systemClock)
await environments.ensureDefault(caller)
for (const env of ['staging', 'production']) await environments.put(caller, env, {})
const doc = flagDocument(1000, 'app')
for (const [i, flag] of Object.entries(Object.values(doc.flags)))
  if (Number(i) % 10 === 0) Object.assign(flag as object, { targeting: { if: [{ '>': [{ var: 'age' }, 30] }, 7, null] } })
const migrations = createMigrationService({
  store,
  environment: 'development',
  publicExport: false,
  maxFlags: 20_000,
  remote: { allowedHosts: [], timeoutMs: 1000, maxBytes: 1 << 20 },
  now: systemClock,
})
await migrations.importDocument(caller, doc, { mode: 'merge', values: 'overwrite', dryRun: false }, 'cli')
const flags = createFlagService(store, 20_000, systemClock, 'development')
const ruled = [...flagsIn(store.committed(), 'development').values()].filter((f) => f.targeting !== undefined).length
console.log(`${store.committed().flags.size} flags, ${ruled} with a rule`)

const median = (f: () => void) => {
  const times: number[] = []
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now()
    f()
    times.push(performance.now() - started)
  }
  return spread(times).median.toFixed(3)
}
const fresh = createServedSnapshots({ keep: false })
const snapshot = store.committed()
console.log(`build, first use of a revision (one environment): ${median(() => fresh.of(snapshot, 'staging'))} ms`)
console.log(
  `every rule compiled: ${median(() => {
    const served = fresh.of(snapshot, 'staging')
    for (const flag of served.flags.values()) served.rule(flag as Flag)
  })} ms (build included)`,
)
console.log(
  `flagd document built and encoded for sync: ${median(() => fresh.of(snapshot, 'staging').flagd('staging').sync)} ms (build included)`,
)
const kept = createServedSnapshots()
const times: number[] = []
const commits: number[] = []
for (let i = 0; i < ROUNDS; i++) {
  const before = kept.of(store.committed(), 'staging')
  for (const flag of before.flags.values()) before.rule(flag as Flag)
  let started = performance.now()
  await flags.update(caller, 'app/g01/f1', { value: 1000 + i })
  commits.push(performance.now() - started)
  started = performance.now()
  kept.of(store.committed(), 'staging')
  times.push(performance.now() - started)
}
console.log(`build after one flag changed, compiled rules carried over: ${spread(times).median.toFixed(3)} ms`)
console.log(`one durable commit (PUT of a value), for scale: ${spread(commits).median.toFixed(3)} ms`)
await store.close()
rmSync(dir, { recursive: true, force: true })
