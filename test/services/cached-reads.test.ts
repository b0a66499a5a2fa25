/**
 * Every cached read answers what its plain twin answers, whoever asked before
 * (docs/architecture.md#caching): flag lists, bulk and single evaluations with their ETags, sync
 * documents and both exports, over random sequences of callers that differ in flag prefixes
 * (overlapping, disjoint from the query, names without a slash), environment (none, the default
 * one by name, another, an unknown one) and permissions (unscoped and `@environment` ones),
 * interleaved with changes confined to one environment and with time passing (a rule reads the
 * clock in one environment). The cached side shares one small request
 * cache, so its regions also evict one another.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { HeldPermission } from '../../src/domain/permission.ts'
import type { Principal } from '../../src/domain/principal.ts'
import { RequestCache } from '../../src/domain/request-cache.ts'
import type { ApiTokenService } from '../../src/services/api-token-service.ts'
import { cachedFlagEvaluator } from '../../src/services/cached-flag-evaluator.ts'
import { createEvaluationService, type EvaluationService } from '../../src/services/evaluation-service.ts'
import type { FlagChangeFeed } from '../../src/services/flag-change-feed.ts'
import { createFlagEvaluator } from '../../src/services/flag-evaluator.ts'
import { cachedFlagReadModel, createFlagReadModel } from '../../src/services/flag-read-model.ts'
import { createFlagService, type FlagService } from '../../src/services/flag-service.ts'
import { createFlagSyncService, type FlagSyncService } from '../../src/services/flag-sync-service.ts'
import { createMigrationExport, type ExportAudience, type MigrationExport } from '../../src/services/migration-export.ts'
import { createPatternGate } from '../../src/services/pattern-gate.ts'
import { createServedSnapshots, type ServedSnapshots } from '../../src/services/served-snapshot.ts'
import type { Store } from '../../src/storage/store.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

const ENVIRONMENTS = ['development', 'staging', 'production']
const BOOLEANS = ['mobile/a', 'mobilex', 'web/c', 'zzz/e']
// the services' clock: a rule reading $flagd.timestamp makes time part of an answer and its ETag
const START = Date.parse('2026-11-27T12:00:00Z')
const LAUNCH = Math.floor(START / 1000) + 1
let at = START
const now = () => new Date(at)
const clock = () => at

let t: TestApp
let store: Store

/** The services a read is asked of, twice: with caches, and plain (nothing kept from one read for the next). */
interface Side {
  flags: FlagService
  evaluations: EvaluationService
  sync: () => FlagSyncService
  exports: () => MigrationExport
}
let plain: Side

/** A cached side with nothing kept yet: one small request cache for all, as the app shares one. */
function cachedSide(): Side {
  const cache = new RequestCache(64 * 1024)
  const read = cachedFlagReadModel(createFlagReadModel(store, 'development', now), cache)
  const snapshots = createServedSnapshots()
  const sync = syncOver(cache, snapshots)
  const exports = exportsOver()
  return {
    flags: createFlagService(store, 1000, now, 'development', createPatternGate(), read),
    evaluations: createEvaluationService(
      store,
      cachedFlagEvaluator(createFlagEvaluator(snapshots, clock), cache),
      undefined,
      clock,
      'development',
    ),
    sync: () => sync,
    exports: () => exports,
  }
}

const syncOver = (cache: RequestCache, snapshots: ServedSnapshots) =>
  createFlagSyncService({
    store,
    apiTokens: {} as ApiTokenService,
    changeFeed: {} as FlagChangeFeed,
    environment: 'development',
    cache,
    snapshots,
  })
const exportsOver = () => createMigrationExport({ store, environment: 'development', publicExport: true, now })

beforeAll(async () => {
  t = await createTestApp()
  store = t.app.store
  const admin = async (method: string, path: string, body: unknown, status: number) =>
    expect((await t.req(method, path, { token: t.adminToken, body })).status).toBe(status)
  await admin('PUT', '/api/segments/pros', { rule: { '==': [{ var: 'plan' }, 'pro'] } }, 201)
  for (const env of ENVIRONMENTS.slice(1)) await admin('PUT', `/api/environments/${env}`, {}, 201)
  for (const name of BOOLEANS) await admin('POST', '/api/flags', { name, type: 'BOOLEAN', value: false }, 201)
  await admin('POST', '/api/flags', { name: 'mobile/size', type: 'INTEGER', defaultValue: 3 }, 201)
  await admin('POST', '/api/flags', { name: 'web/ab', type: 'AB-TEST', chancePercentB: 40 }, 201)
  const plan = { name: 'web/plan', type: 'STRING', variants: { gold: 'gold', plain: 'plain' }, defaultValue: 'plain' }
  await admin('POST', '/api/flags', plan, 201)
  // a rule in staging only, a value in production only
  await admin('PUT', '/api/flags/web/plan?environment=staging', { targeting: { if: [{ $ref: 'pros' }, 'gold', null] } }, 200)
  await admin('PUT', '/api/flags/mobile/a?environment=production', { value: true }, 200)
  // a rule reading the clock, in production only
  await admin('POST', '/api/flags', { name: 'web/late', type: 'BOOLEAN', variants: { on: true, off: false }, defaultValue: false }, 201)
  const late = { targeting: { if: [{ '>=': [{ var: '$flagd.timestamp' }, LAUNCH] }, 'on', 'off'] } }
  await admin('PUT', '/api/flags/web/late?environment=production', late, 200)

  const bare = createFlagReadModel(store, 'development', now, { keep: false })
  plain = {
    flags: createFlagService(store, 1000, now, 'development', createPatternGate(), bare),
    evaluations: createEvaluationService(
      store,
      createFlagEvaluator(createServedSnapshots({ keep: false }), clock),
      undefined,
      clock,
      'development',
    ),
    sync: () => syncOver(new RequestCache(1 << 20), createServedSnapshots({ keep: false })),
    exports: exportsOver,
  }
})
afterAll(async () => {
  await t?.close()
})

/** Scopes and grants of the shapes that matter, the common ones more often. */
const prefixSets = fc.oneof(
  { arbitrary: fc.constant([]), weight: 3 },
  { arbitrary: fc.constant(['mobile/']), weight: 3 },
  { arbitrary: fc.constant(['web/', 'zzz/']), weight: 2 },
  { arbitrary: fc.subarray(['mobile/', 'web/', 'mobilex', 'zzz/', 'web/c', 'mob'], { minLength: 1 }), weight: 2 },
)
const grants = fc.oneof(
  { arbitrary: fc.constant<HeldPermission[]>(['flag:read']), weight: 3 },
  { arbitrary: fc.constant<HeldPermission[]>(['flag:evaluate', 'migration:read']), weight: 2 },
  {
    arbitrary: fc.subarray<HeldPermission>([
      'flag:read',
      'flag:read@staging',
      'flag:read@development',
      'flag:evaluate',
      'flag:evaluate@production',
      'flag:evaluate@staging',
      'migration:read',
    ]),
    weight: 3,
  },
)
const principals: fc.Arbitrary<Principal> = fc
  .record({
    kind: fc.constantFrom('token' as const, 'user' as const),
    flagPrefixes: prefixSets,
    environment: fc.constantFrom(undefined, undefined, ...ENVIRONMENTS),
    permissions: grants,
  })
  .map(({ kind, flagPrefixes, environment, permissions }): Principal => {
    const id = `${kind}:${flagPrefixes.join(',')}@${environment}:${permissions.join(',')}`
    const env = environment === undefined ? {} : { environment }
    return kind === 'token'
      ? { kind, tokenId: id, name: id, permissions, flagPrefixes, ...env }
      : { kind, userId: id, username: id, sessionId: id, permissions, flagPrefixes, ...env }
  })
/** A caller of a sequence: one of its few principals (callers ask again and again), or the system. */
type Ref = number | 'system'
const refs: fc.Arbitrary<Ref> = fc.oneof({ arbitrary: fc.nat(3), weight: 5 }, { arbitrary: fc.constant('system' as const), weight: 1 })
const queries = fc.constantFrom('', '', 'mobile', 'mobile/', 'web/', 'web/c', 'mobilex', 'w', 'zzz/', 'nothing/')
const environments = fc.constantFrom(undefined, undefined, ...ENVIRONMENTS, 'nowhere')
const contexts = fc.record({ targetingKey: fc.constantFrom('u1', 'u2', ''), plan: fc.constantFrom('pro', 'free') }, { requiredKeys: [] })

/** A read's answer, or the error it threw (its kind and message). */
function outcome(read: () => unknown): unknown {
  try {
    return { answer: read() }
  } catch (err) {
    return { error: err instanceof Error ? `${err.constructor.name} ${err.message}` : String(err) }
  }
}

type Action =
  | { kind: 'list'; who: Ref; prefix: string; env: string | undefined }
  | { kind: 'bulk'; who: Ref; context: Record<string, unknown> }
  | { kind: 'one'; who: Ref; context: Record<string, unknown> }
  | { kind: 'sync'; who: Ref | 'anonymous' }
  | { kind: 'export'; who: Ref | 'public'; env: string | undefined; format: 'flagd' | 'migration' }
  | { kind: 'write'; name: string; env: string; value: boolean }
  | { kind: 'tick'; ms: number }

const actions: fc.Arbitrary<Action> = fc.oneof(
  { arbitrary: fc.record({ kind: fc.constant('list' as const), who: refs, prefix: queries, env: environments }), weight: 4 },
  { arbitrary: fc.record({ kind: fc.constant('bulk' as const), who: refs, context: contexts }), weight: 3 },
  { arbitrary: fc.record({ kind: fc.constant('one' as const), who: refs, context: contexts }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('sync' as const), who: fc.oneof(refs, fc.constant('anonymous' as const)) }), weight: 2 },
  {
    arbitrary: fc.record({
      kind: fc.constant('export' as const),
      who: fc.oneof(refs, fc.constant('public' as const)),
      env: environments,
      format: fc.constantFrom('flagd' as const, 'migration' as const),
    }),
    weight: 2,
  },
  {
    arbitrary: fc.record({
      kind: fc.constant('write' as const),
      name: fc.constantFrom(...BOOLEANS),
      env: fc.constantFrom(...ENVIRONMENTS),
      value: fc.boolean(),
    }),
    weight: 1,
  },
  { arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 300, max: 1500 }) }), weight: 2 },
)

/** What `side` answers to `action` (a write is made once, by the caller), `pool` the sequence's callers. */
function ask(side: Side, action: Exclude<Action, { kind: 'write' | 'tick' }>, pool: readonly Principal[]): unknown {
  const as = (ref: Ref): Principal => (ref === 'system' ? SYSTEM.principal : (pool[ref % pool.length] as Principal))
  switch (action.kind) {
    case 'list':
      return outcome(() => side.flags.list(as(action.who), action.prefix, action.env))
    case 'bulk':
      return outcome(() => side.evaluations.bulk(as(action.who), action.context, () => false))
    case 'one': {
      const who = as(action.who)
      return [...store.committed().flags.keys()].map((name) => outcome(() => side.evaluations.one(who, name, action.context).text))
    }
    case 'sync': {
      const caller = action.who === 'anonymous' ? { kind: 'anonymous' as const } : tokenCaller(as(action.who))
      return caller === undefined ? undefined : outcome(() => side.sync().documentFor(caller))
    }
    case 'export': {
      const who: ExportAudience = action.who === 'public' ? 'public' : as(action.who)
      const exports = side.exports()
      return action.format === 'flagd'
        ? outcome(() => exports.exportFlagd(who, action.env))
        : outcome(() => exports.exportFile(who, action.env))
    }
  }
}

/** The sync caller of a token principal (only tokens reach the sync protocol). */
const tokenCaller = (p: Principal) => (p.kind === 'token' ? { kind: 'token' as const, principal: p } : undefined)

test('every cached read answers as its plain twin, whoever asked before, across scopes and changes', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(principals, { minLength: 1, maxLength: 4 }),
      fc.array(actions, { minLength: 1, maxLength: 16 }),
      async (pool, sequence) => {
        // each sequence starts with nothing kept, so a counterexample stands on its own
        const cached = cachedSide()
        at = START
        for (const action of sequence) {
          if (action.kind === 'tick') {
            at += action.ms
            continue
          }
          if (action.kind === 'write') {
            await t.app.services.flags.update(SYSTEM, action.name, { value: action.value }, undefined, undefined, action.env)
            continue
          }
          const want = ask(plain, action, pool)
          // asked three times: a bulk answer is kept from the second time its ETag is asked, served the third
          for (let i = 0; i < 3; i++) expect(ask(cached, action, pool)).toEqual(want)
        }
      },
    ),
    {
      numRuns: 300,
      // besides the random ones: the reported leak (an unconfined list, then a confined caller whose
      // prefixes miss the query), and a poller of production asking across the second its rule waits for
      examples: [
        [
          [{ kind: 'token', tokenId: 'm', name: 'm', permissions: ['flag:read'], flagPrefixes: ['mobile/'] }],
          [
            { kind: 'list', who: 'system', prefix: '', env: undefined },
            { kind: 'list', who: 0, prefix: 'web/', env: undefined },
          ],
        ],
        [
          [{ kind: 'token', tokenId: 'p', name: 'p', permissions: ['flag:evaluate'], flagPrefixes: [], environment: 'production' }],
          [
            { kind: 'bulk', who: 0, context: {} },
            { kind: 'bulk', who: 0, context: {} },
            { kind: 'tick', ms: 1500 },
            { kind: 'bulk', who: 0, context: {} },
          ],
        ],
      ],
    },
  )
})

test('the found defect: after an unconfined list, a confined caller whose prefixes miss the query gets []', () => {
  const cached = cachedSide()
  const everyone = cached.flags.list(SYSTEM.principal, '', undefined)
  expect(JSON.parse(everyone).length).toBeGreaterThan(0)
  const mobile: Principal = { kind: 'token', tokenId: 'm', name: 'm', permissions: ['flag:read'], flagPrefixes: ['mobile/'] }
  expect(cached.flags.list(mobile, 'web/', undefined)).toBe('[]')
})

test('a sync document and a flagd export name the environment they serve, and carry its states', () => {
  const staging: Principal = {
    kind: 'token',
    tokenId: 's',
    name: 's',
    permissions: ['flag:evaluate', 'migration:read'],
    flagPrefixes: [],
    environment: 'staging',
  }
  for (const side of [cachedSide(), plain]) {
    const document = JSON.parse(side.sync().documentFor({ kind: 'token', principal: staging }))
    expect(document.metadata.environment).toBe('staging')
    expect(document.flags['web/plan'].targeting).toBeDefined() // the rule staging alone has
    const exported = side.exports().exportFlagd(staging)
    expect(JSON.parse(exported.text).metadata.environment).toBe('staging')
    expect(exported.fileName).toContain('_staging_')
    expect(JSON.parse(side.exports().exportFlagd('public').text).metadata.environment).toBe('development')
  }
})
