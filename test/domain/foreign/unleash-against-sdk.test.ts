/**
 * The import from Unleash judged against Unleash itself (docs/migrations.md#from-unleash): the
 * export's features, bootstrapped offline into Unleash's Node SDK, and the same export translated
 * and imported into a daemon, answer every generated context alike through OFREP; where a
 * percentage decides, the share of each answer over many keys matches (the exact weights are
 * checked in unleash-translator.test.ts).
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { InMemStorageProvider, Unleash } from 'unleash-client'
import { validateDefinition } from '../../../src/domain/flag-definition.ts'
import type { ForeignTranslation } from '../../../src/domain/foreign/foreign-translation.ts'
import { translateUnleash } from '../../../src/domain/foreign/unleash-translator.ts'
import { type ServiceWorld, START, tempServices, userCaller } from '../../helpers/temp-services.ts'
import { SYSTEM } from '../../helpers/test-app.ts'

type Obj = Record<string, any>
const raw: Obj = JSON.parse(readFileSync(join(import.meta.dir, '../../fixtures/foreign/unleash/export.json'), 'utf8'))
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'migration:read', 'migration:write'])
const worlds = tempServices()

/** The export as Unleash's client API serves it to SDKs: enabled strategies in order, segments by id. */
function clientFeatures(file: Obj) {
  const data = file.features.map((f: Obj) => {
    const env = file.featureEnvironments.find((e: Obj) => e.featureName === f.name)
    const strategies = file.featureStrategies
      .filter((s: Obj) => s.featureName === f.name && !s.disabled)
      .sort((a: Obj, b: Obj) => a.sortOrder - b.sortOrder)
      .map((s: Obj) => ({ name: s.name, parameters: s.parameters, constraints: s.constraints, segments: s.segments, variants: s.variants }))
    const deps = (file.dependencies as Obj[]).find((d) => d.feature === f.name)?.dependencies
    return {
      name: f.name,
      type: f.type,
      project: f.project,
      enabled: env?.enabled === true,
      strategies,
      variants: env?.variants ?? [],
      dependencies: deps,
    }
  })
  const segments = file.segments.map((s: Obj) => ({ id: s.id, name: s.name, constraints: s.constraints ?? [] }))
  return { data, segments }
}

let sdk: Unleash
let world: ServiceWorld
let flags: ForeignTranslation['flags']

beforeAll(async () => {
  sdk = new Unleash({
    appName: 'web',
    url: 'http://127.0.0.1:9/api/',
    disableMetrics: true,
    refreshInterval: 0,
    storageProvider: new InMemStorageProvider(),
    bootstrap: clientFeatures(raw) as never,
  })
  sdk.on('error', () => {}) // offline: its one fetch fails, the bootstrap is what it evaluates
  sdk.on('warn', () => {})
  await new Promise((ready) => sdk.once('ready', ready))
  const translation = translateUnleash(raw, { nowMs: START }) as ForeignTranslation
  flags = translation.flags
  // prerequisites arrive with their own work on the daemon's flags; until then the flags that need them wait
  if (!validateDefinition({ type: 'BOOLEAN', prerequisites: [] }).ok)
    flags = Object.fromEntries(Object.entries(flags).filter(([, f]) => f.prerequisites === undefined))
  world = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'production' } })
  const doc = {
    environment: 'production',
    version: '1.0.0',
    createdAt: new Date(START).toISOString(),
    flags,
    segments: translation.segments,
  }
  const result = await world.s.migrations.importDocument(admin, doc, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
  expect(result.summary.created).toBe(Object.keys(flags).length)
})
afterAll(() => sdk?.destroy())

/** A small seeded generator, so a failure names a context that can be replayed. */
function random(seed: number) {
  let s = seed >>> 0
  return () => {
    s = (s + 0x6d2b79f5) >>> 0
    let t = s
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}
const pick = <T>(r: () => number, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T

interface Pair {
  unleash: Obj
  ofrep: Obj
}

/** One context as each side takes it: Unleash's fields and properties, and the same flattened for OFREP. */
function contextPair(r: () => number, userId: string | undefined, atMs: number): Pair {
  const fields: Obj = {
    sessionId: pick(r, [undefined, 's-1', 's-2', `s-${Math.floor(r() * 1e6)}`]),
    remoteAddress: pick(r, [undefined, '10.0.0.1', '10.0.0.2', '10.0.0.3', '192.168.1.10', '172.16.4.2', '172.17.0.1']),
    environment: pick(r, ['production', 'staging']),
    appName: pick(r, ['web', 'ios', 'android']),
  }
  const properties: Obj = {
    email: pick(r, [undefined, 'ann@example.com', 'bob@example.org', 'eve@example.net', 'x@EXAMPLE.COM']),
    country: pick(r, [undefined, 'NO', 'SE', 'DK', 'FI', 'no']),
    appVersion: pick(r, [undefined, '1.9.9', '1.9.9+build.7', '2.1.0', '2.1.1', '2.9.0', '3.0.0-rc.0', '3.0.0-rc.1', '3.0.0', '10.0.0']),
    plan: pick(r, [undefined, 'free', 'pro', 'enterprise']),
    orderTotal: pick(r, [undefined, 0, 99.99, 100, 500, 999.5, 1000, 5000]),
    age: pick(r, [undefined, 16, 17, 18, 40]),
    query: pick(r, [undefined, 'red shoes', 'boots', 'hat', 'SHOE']),
  }
  const defined = (o: Obj) => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined))
  const unleash = {
    ...defined({ ...fields, userId }),
    currentTime: new Date(atMs),
    properties: Object.fromEntries(Object.entries(defined(properties)).map(([k, v]) => [k, String(v)])),
  }
  const ofrep = defined({ ...fields, ...properties, targetingKey: userId })
  return { unleash, ofrep }
}

const ofrepAnswer = (name: string, context: Obj) => JSON.parse(world.s.evaluations.one(SYSTEM.principal, name, context).text)

/** What Unleash answers for `name`, as the import promises to answer it: a boolean, or the variant and its value, or nothing. */
function unleashAnswer(name: string, context: Obj): { value?: unknown; variant?: string } {
  const flag = flags[name] as Obj
  if (flag.type === 'BOOLEAN') return { value: sdk.isEnabled(name, context as never) }
  const v = sdk.getVariant(name, context as never)
  return v.enabled ? { variant: v.name, value: flag.variants[v.name] } : {}
}

const splitFlags = () => Object.keys(flags).filter((name) => JSON.stringify(flags[name]?.targeting ?? null).includes('fractional'))

// around the promotion's dates; flagd's rules read whole seconds, so the one millisecond a date names is left out
const TIMES = [
  '2026-11-20T12:00:00Z',
  '2026-11-26T23:59:59.999Z',
  '2026-11-27T00:00:00.001Z',
  '2026-11-28T08:30:00Z',
  '2026-11-30T23:59:59.999Z',
  '2026-12-01T00:00:00.001Z',
  '2026-12-07T12:00:00Z',
].map(Date.parse)

test('every flag without a percentage answers every context as Unleash does, at every time', () => {
  const exact = Object.keys(flags).filter((n) => !splitFlags().includes(n))
  expect(exact.length).toBeGreaterThan(10)
  const r = random(7)
  let compared = 0
  for (const at of TIMES) {
    world.advance(at - world.ms())
    for (let i = 0; i < 400; i++) {
      const { unleash, ofrep } = contextPair(r, pick(r, [undefined, '', 'alice', 'bob', 'carol', 'dave', 'staff-1', 'ops-1', `u-${i}`]), at)
      for (const name of exact) {
        const got = ofrepAnswer(name, ofrep)
        const want = unleashAnswer(name, unleash)
        const same: Obj = want.variant !== undefined ? { variant: got.variant, value: got.value } : { value: got.value }
        if (JSON.stringify(same) !== JSON.stringify(want))
          expect({ name, context: ofrep, at, got: same }).toEqual({ name, context: ofrep, at, got: want as Obj })
        compared++
      }
    }
  }
  expect(compared).toBeGreaterThan(20_000)
}, 60_000)

test('where a percentage decides, each answer takes the same share of many keys as in Unleash', () => {
  const r = random(11)
  world.advance((TIMES[6] as number) - world.ms())
  const shares = new Map<string, { flagd: Map<string, number>; unleash: Map<string, number> }>()
  const N = 10_000
  const count = (m: Map<string, number>, k: string) => m.set(k, (m.get(k) ?? 0) + 1)
  for (let i = 0; i < N; i++) {
    const { unleash, ofrep } = contextPair(r, `user-${i}-${Math.floor(r() * 1e9)}`, TIMES[6] as number)
    unleash.sessionId = ofrep.sessionId = `session-${i}`
    for (const name of splitFlags()) {
      const entry = shares.get(name) ?? { flagd: new Map(), unleash: new Map() }
      shares.set(name, entry)
      const got = ofrepAnswer(name, ofrep)
      count(entry.flagd, JSON.stringify([got.variant ?? null, got.value ?? null]))
      const want = unleashAnswer(name, unleash)
      const variant = want.variant ?? (want.value === undefined ? null : String(want.value))
      count(entry.unleash, JSON.stringify([variant, want.value ?? null]))
    }
  }
  expect(shares.size).toBeGreaterThanOrEqual(4)
  for (const [name, { flagd, unleash }] of shares) {
    for (const key of new Set([...flagd.keys(), ...unleash.keys()])) {
      const a = (flagd.get(key) ?? 0) / N
      const b = (unleash.get(key) ?? 0) / N
      // 10,000 keys: a share's sampling error is at most 0.5 %; 2 % is four of those
      expect({ name, key, off: Math.abs(a - b) < 0.02 }).toEqual({ name, key, off: true })
    }
  }
}, 60_000)
