/**
 * The LaunchDarkly import judged against LaunchDarkly itself (docs/migrations.md#from-launchdarkly):
 * the fixture's flag data evaluated by LaunchDarkly's Node server SDK (its file data source, offline)
 * and, translated and imported, by this daemon's OFREP evaluation, for many generated contexts.
 * Outside percentage buckets every answer is the same; percentages are compared by their weights.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { init, integrations, type LDClient } from '@launchdarkly/node-server-sdk'
import { translateLaunchdarkly } from '../../../src/domain/foreign/launchdarkly-translator.ts'
import { type ServiceWorld, tempServices } from '../../helpers/temp-services.ts'
import { SYSTEM } from '../../helpers/test-app.ts'

const FILE = join(import.meta.dir, '../../fixtures/foreign/launchdarkly/flag-data.json')
const APP_DEFAULT = '__the application default__'
const world = tempServices()
let ld: LDClient

beforeAll(async () => {
  const source = new integrations.FileDataSourceFactory({ paths: [FILE], autoUpdate: false })
  ld = init('sdk-offline-test', {
    updateProcessor: source.getFactory(),
    sendEvents: false,
    diagnosticOptOut: true,
    logger: { error() {}, warn() {}, info() {}, debug() {} },
  })
  await ld.waitForInitialization({ timeout: 10 })
})
afterAll(() => ld.close())

/** A small deterministic generator, so a failure can be replayed. */
function generator(seed: number) {
  let s = seed >>> 0
  const next = () => {
    s = (Math.imul(s, 1_664_525) + 1_013_904_223) >>> 0
    return s / 4_294_967_296
  }
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T
  return { next, pick }
}

/** Contexts of users, every attribute sometimes missing; values of the types the rules compare. */
function contexts(count: number): Record<string, unknown>[] {
  const g = generator(42)
  const out: Record<string, unknown>[] = []
  for (let i = 0; i < count; i++) {
    const c: Record<string, unknown> = { key: `user-${i}` }
    const maybe = (name: string, value: () => unknown) => {
      if (g.next() < 0.8) c[name] = value()
    }
    maybe(
      'email',
      () => `${g.pick(['ann', 'bob', 'sale-team', 'admin-x'])}${i}@${g.pick(['acme.io', 'acme.com', 'example.com', 'mail.org'])}`,
    )
    maybe('country', () => g.pick(['FR', 'DE', 'US', 'BR', 'IN', 'JP']))
    maybe('plan', () => g.pick(['free', 'pro', 'enterprise', 'internal']))
    maybe('name', () => g.pick(['Dr Who', 'Prof X', 'Ann', 'Drake', 'prof y']))
    maybe('age', () => Math.floor(g.next() * 90))
    maybe('appVersion', () => g.pick(['1.9.9', '2.0.0', '2.3.1', '2.3.2', '3.0.0-beta.1', '3.0.0-beta.2', '3.0.0', '2.0.0-rc.1', '10.1.0']))
    maybe('signupDate', () => 1_704_067_200_000 + Math.floor(g.next() * 94_608_000_000))
    maybe('company', () => g.pick(['initech', 'globex', 'umbrella', 'hooli']))
    out.push(c)
  }
  return out
}

/** Whether LaunchDarkly's answer came from a percentage split (its fallthrough or a rule serving a rollout). */
function fromSplit(flag: Record<string, unknown>, reason: { kind: string; ruleIndex?: number }): boolean {
  if (reason.kind === 'FALLTHROUGH') return (flag.fallthrough as Record<string, unknown>).rollout !== undefined
  if (reason.kind === 'RULE_MATCH')
    return ((flag.rules as Record<string, unknown>[])[reason.ruleIndex as number] as Record<string, unknown>).rollout !== undefined
  return false
}

/** Whether a percentage decides LaunchDarkly's answer of `ldKey` for `context`: its own split, or a prerequisite's, through any chain. */
async function splitDecides(ldKey: string, context: Record<string, unknown>, seen = new Set<string>()): Promise<boolean> {
  const original = originals?.[ldKey]
  if (original === undefined || seen.has(ldKey)) return false
  seen.add(ldKey)
  const detail = await ld.variationDetail(ldKey, { kind: 'user', ...context } as never, APP_DEFAULT)
  if (fromSplit(original, detail.reason as never)) return true
  for (const p of (original.prerequisites ?? []) as { key: string }[]) if (await splitDecides(p.key, context, seen)) return true
  return false
}

let originals: Record<string, Record<string, unknown>> | undefined
let w: ServiceWorld

test('every imported flag answers each context as LaunchDarkly does, outside percentage buckets', async () => {
  w = await world.open()
  const raw = JSON.parse(await Bun.file(FILE).text())
  const t = translateLaunchdarkly(raw, { nowMs: w.ms() })
  if ('problems' in t) throw new Error(JSON.stringify(t.problems))
  const flags = t.flags
  const doc = { environment: 'production', version: '1.0.0', createdAt: new Date(w.ms()).toISOString(), flags, segments: t.segments }
  await w.s.migrations.importDocument(SYSTEM, doc, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')

  originals = raw.flags as Record<string, Record<string, unknown>>
  let compared = 0
  for (const context of contexts(1000)) {
    const { key, ...attributes } = context
    for (const [name, flag] of Object.entries(flags)) {
      const ldKey = (flag.metadata as Record<string, string>).originalKey as string
      const detail = await ld.variationDetail(ldKey, { kind: 'user', ...context } as never, APP_DEFAULT)
      const original = originals[ldKey]
      if (original !== undefined && (await splitDecides(ldKey, context))) continue
      // the segment sampled-users takes 10 % of the US contexts: there a bucket decides
      if (ldKey === 'us-sample-banner' && context.country === 'US') continue
      const answer = JSON.parse(w.s.evaluations.one(SYSTEM.principal, name, { targetingKey: key, ...attributes }).text)
      const ours = 'value' in answer ? answer.value : APP_DEFAULT
      if (JSON.stringify(ours) !== JSON.stringify(detail.value))
        throw new Error(`${name} for ${JSON.stringify(context)}: flagd ${JSON.stringify(answer)}, LaunchDarkly ${JSON.stringify(detail)}`)
      compared++
    }
  }
  expect(compared).toBeGreaterThan(8_000)
})
