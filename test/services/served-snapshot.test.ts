/**
 * One served snapshot per committed revision and environment (docs/architecture.md#snapshots): built
 * once however often it is read, built again only when a commit lands, a change confined to another
 * environment leaves this one's served parts as they were (the same objects), the compiled parts of
 * unchanged flags carry over, only the newest per environment is kept, and a confined caller never
 * receives what another scope sees.
 */

import { expect, test } from 'bun:test'
import type { Principal } from '../../src/domain/principal.ts'
import { RequestCache } from '../../src/domain/request-cache.ts'
import type { ApiTokenService } from '../../src/services/api-token-service.ts'
import { cachedFlagEvaluator } from '../../src/services/cached-flag-evaluator.ts'
import { createEnvironmentService } from '../../src/services/environment-service.ts'
import { createEvaluationService } from '../../src/services/evaluation-service.ts'
import type { FlagChangeFeed } from '../../src/services/flag-change-feed.ts'
import { createFlagEvaluator } from '../../src/services/flag-evaluator.ts'
import { createFlagService } from '../../src/services/flag-service.ts'
import { createFlagSyncService } from '../../src/services/flag-sync-service.ts'
import { createInProcessUsage } from '../../src/services/in-process-usage.ts'
import { createServedSnapshots, type ServedSnapshot } from '../../src/services/served-snapshot.ts'
import { UsageCounter } from '../../src/services/usage-counter.ts'
import { tempFileStores } from '../helpers/temp-store.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const stores = tempFileStores()
const now = () => new Date('2026-11-27T12:00:00Z')
const clock = () => now().getTime()

/** A store with environments development (the default) and staging, a plain flag and one with a rule. */
async function setUp() {
  const store = await stores.open()
  const environments = createEnvironmentService(store, 'development', now)
  await environments.ensureDefault(SYSTEM)
  await environments.put(SYSTEM, 'staging', {})
  const flags = createFlagService(store, 1000, now, 'development')
  await flags.create(SYSTEM, { name: 'web/plain', type: 'BOOLEAN', value: true })
  await flags.create(SYSTEM, { name: 'mobile/other', type: 'BOOLEAN', value: false })
  const ruled = { name: 'web/ruled', type: 'STRING', variants: { gold: 'gold', plain: 'plain' }, defaultValue: 'plain' }
  await flags.create(SYSTEM, ruled)
  await flags.update(SYSTEM, 'web/ruled', { targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'gold', null] } })
  const built: ServedSnapshot[] = []
  const snapshots = createServedSnapshots({ onBuild: (s) => built.push(s) })
  return { store, flags, snapshots, built }
}

const token = (flagPrefixes: string[], environment?: string): Principal => ({
  kind: 'token',
  tokenId: `t-${flagPrefixes.join()}-${environment}`,
  name: 'app',
  permissions: ['flag:evaluate'],
  flagPrefixes,
  ...(environment === undefined ? {} : { environment }),
})

test('built once per revision and environment, however often and by whichever reader it is read', async () => {
  const { store, snapshots, built } = await setUp()
  const evaluator = cachedFlagEvaluator(createFlagEvaluator(snapshots, clock), new RequestCache(1 << 20))
  const evaluations = createEvaluationService(store, evaluator, undefined, clock, 'development')
  const sync = createFlagSyncService({
    store,
    apiTokens: {} as ApiTokenService,
    changeFeed: {} as FlagChangeFeed,
    environment: 'development',
    cache: new RequestCache(1 << 20),
    snapshots,
  })
  const usage = createInProcessUsage(store, new UsageCounter(clock, 'development'), 'development', snapshots)
  const point = { series: 's', flag: 'web/plain', variant: 'true', reason: 'STATIC', value: 1, cumulative: false, start: '' }
  for (let i = 0; i < 5; i++) {
    evaluations.one(token([]), 'web/plain', { targetingKey: `u${i}` })
    evaluations.bulk(token([]), { plan: i % 2 ? 'pro' : 'free' }, () => false)
    evaluations.all(token(['web/']), {})
    sync.documentFor({ kind: 'anonymous' })
    expect(usage.ingest(token([]), [point])).toBe(1)
  }
  expect(built.map((s) => [s.snapshot.revision, s.environment])).toEqual([[store.committed().revision, 'development']])
  for (let i = 0; i < 3; i++) evaluations.bulk(token([], 'staging'), {}, () => false)
  expect(built.map((s) => s.environment)).toEqual(['development', 'staging'])
})

test('a commit builds anew on next use; unchanged flags keep their compiled rule and answers', async () => {
  const { store, flags, snapshots, built } = await setUp()
  const first = snapshots.of(store.committed(), 'development')
  const rule = first.rule(first.flags.get('web/ruled') as never)
  const answer = first.part(
    first.flags.get('web/plain') as never,
    '',
    () => ({ made: 1 }),
    () => true,
  )
  await flags.update(SYSTEM, 'mobile/other', { value: true })
  expect(built).toHaveLength(1) // nothing built until read
  const second = snapshots.of(store.committed(), 'development')
  expect(built).toHaveLength(2)
  expect(second).not.toBe(first)
  expect(second.rule(second.flags.get('web/ruled') as never)).toBe(rule as never)
  expect(
    second.part(
      second.flags.get('web/plain') as never,
      '',
      () => ({ made: 2 }),
      () => true,
    ),
  ).toBe(answer)
  expect(second.flags.get('mobile/other')?.value).toBe(true)
})

test("a change confined to another environment leaves this one's served parts as they were", async () => {
  const { store, flags, snapshots } = await setUp()
  const before = snapshots.of(store.committed(), 'staging')
  const doc = before.flagd('staging')
  await flags.update(SYSTEM, 'web/plain', { value: false }, undefined, undefined, 'development')
  const after = snapshots.of(store.committed(), 'staging')
  expect(after.tag).toBe(before.tag)
  expect(after.names).toEqual(before.names)
  const served = (s: ServedSnapshot) =>
    s.names.map((n) => {
      const f = s.flags.get(n)
      return [n, f?.value, f?.enabled, f?.targeting, f?.servedRevision ?? f?.revision]
    })
  expect(served(after)).toEqual(served(before))
  // its documents are not built or encoded again
  expect(after.flagd('staging')).toBe(doc)
  const development = snapshots.of(store.committed(), 'development')
  expect(development.flags.get('web/plain')?.value).toBe(false)
  expect(development.tag).not.toBe(before.tag)
})

test('only the newest of each existing environment is kept: old revisions and unknown names are not', async () => {
  const { store, flags, snapshots, built } = await setUp()
  const old = store.committed()
  snapshots.of(old, 'development')
  await flags.update(SYSTEM, 'web/plain', { value: false })
  snapshots.of(store.committed(), 'development')
  // a reader still on the old revision gets its own, each time, and it replaces nothing
  snapshots.of(old, 'development')
  snapshots.of(old, 'development')
  expect(built).toHaveLength(4)
  expect(snapshots.of(store.committed(), 'development')).toBe(built[1] as ServedSnapshot)
  // a name that is no environment is built for its caller and never kept
  snapshots.of(store.committed(), 'nowhere')
  snapshots.of(store.committed(), 'nowhere')
  expect(built).toHaveLength(6)
})

test('scopes never leak: each caller receives only its prefixes and its environment, whoever asked first', async () => {
  const { store, flags, snapshots } = await setUp()
  await flags.update(SYSTEM, 'web/plain', { value: false }, undefined, undefined, 'staging')
  const evaluator = cachedFlagEvaluator(createFlagEvaluator(snapshots, clock), new RequestCache(1 << 20))
  const evaluations = createEvaluationService(store, evaluator, undefined, clock, 'development')
  const plain = createEvaluationService(
    store,
    createFlagEvaluator(createServedSnapshots({ keep: false }), clock),
    undefined,
    clock,
    'development',
  )
  const callers = [token([]), token(['web/']), token(['mobile/']), token([], 'staging'), token(['web/'], 'staging'), token(['nothing/'])]
  const names = (p: Principal) => evaluations.all(p, { plan: 'pro' }).map(([f]) => f.name)
  for (const order of [callers, [...callers].reverse()])
    for (const p of order) {
      expect(evaluations.bulk(p, { plan: 'pro' }, () => false)).toEqual(plain.bulk(p, { plan: 'pro' }, () => false))
      expect(evaluations.all(p, { plan: 'pro' })).toEqual(plain.all(p, { plan: 'pro' }))
    }
  expect(names(token(['web/']))).toEqual(['web/plain', 'web/ruled'])
  expect(names(token(['nothing/']))).toEqual([])
  expect(evaluations.one(token([], 'staging'), 'web/plain', {}).result.value).toBe(false)
  expect(evaluations.one(token([]), 'web/plain', {}).result.value).toBe(true)
  expect(() => evaluations.one(token(['mobile/']), 'web/plain', {})).toThrow('no flag named')
})

test('an environment removed and made again under its name serves its new states: nothing of the old one carries over', async () => {
  const { store, flags, snapshots } = await setUp()
  let at = Date.parse('2026-11-27T12:00:00Z')
  const environments = createEnvironmentService(store, 'development', () => new Date((at += 1000)))
  await environments.put(SYSTEM, 'x', {})
  await flags.update(SYSTEM, 'web/plain', { value: false }, undefined, undefined, 'x')
  const before = snapshots.of(store.committed(), 'x')
  const document = (s: ServedSnapshot) => JSON.parse(s.flagd('x').sync).flags['web/plain']
  expect(document(before).variants[document(before).defaultVariant]).toBe(false)
  await environments.remove(SYSTEM, 'x')
  await environments.put(SYSTEM, 'x', {}) // a copy of development, where web/plain is true
  const after = snapshots.of(store.committed(), 'x')
  expect(after.flags.get('web/plain')?.value).toBe(true)
  expect(document(after).variants[document(after).defaultVariant]).toBe(true)
  // and bulk ETags of the old x do not name the new one's answers
  expect(after.tag).not.toBe(before.tag)
})
