/**
 * Prerequisites (docs/api.md#prerequisites) at the service level: what a write may and may not do
 * across flags, the answers OFREP gives for every context, the trace, the revisions dependents get,
 * and OpenFeature's own evaluator (`@openfeature/flagd-core`) on the flagd export giving OFREP's
 * answers for many contexts, with a split and a rollout in the chain.
 */

import { afterEach, beforeEach, expect, setSystemTime, test } from 'bun:test'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { explainAnswer } from '../../src/http/evaluation-explained.ts'
import { oracle } from '../helpers/flagd-oracle.ts'
import { askedOf, chainContext, prerequisiteChain } from '../helpers/prerequisite-chain.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

const START = Date.parse('2026-12-01T09:00:00.000Z')
let now = START
let t: TestApp

beforeEach(async () => {
  now = START
  t = await createTestApp({}, { now: () => new Date(now) })
})
afterEach(async () => {
  setSystemTime()
  await t.close()
})

const flags = () => t.app.services.flags
const create = (name: string, body: Record<string, unknown>) => flags().create(SYSTEM, { name, ...body })
const ofrep = (name: string, context: Record<string, unknown> = {}) =>
  JSON.parse(t.app.services.evaluations.one(systemPrincipal('cli'), name, context).text) as Record<string, unknown>
const refusal = async (p: Promise<unknown>) => {
  try {
    await p
  } catch (err) {
    return err as { code: string; message: string; details?: Record<string, unknown> }
  }
  throw new Error('expected a refusal')
}

test('a flag answers as usual while its prerequisite holds and gives its default (DEFAULT) while it does not', async () => {
  await create('checkout/new_api', { type: 'BOOLEAN', value: true })
  await create('checkout/page', {
    type: 'STRING',
    value: 'old',
    variants: { new: 'new' },
    targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'new', null] },
    prerequisites: [{ flag: 'checkout/new_api', variants: ['true'] }],
  })
  expect(ofrep('checkout/page', { plan: 'pro' })).toMatchObject({ value: 'new', reason: 'TARGETING_MATCH' })
  expect(flags().get(SYSTEM.principal, 'checkout/page').prerequisites).toEqual([{ flag: 'checkout/new_api', variants: ['true'] }])
  expect(flags().dependents(SYSTEM.principal, 'checkout/new_api')).toEqual(['checkout/page'])
  const before = flags().get(SYSTEM.principal, 'checkout/page').revision
  await flags().update(SYSTEM, 'checkout/new_api', { value: false })
  // the dependent moved with it: a new revision, and the default answer
  expect(flags().get(SYSTEM.principal, 'checkout/page').revision).toBe(before + 1)
  expect(ofrep('checkout/page', { plan: 'pro' })).toMatchObject({ value: 'old', reason: 'DEFAULT' })
  // a disabled prerequisite never holds
  await flags().update(SYSTEM, 'checkout/new_api', { value: true, enabled: false })
  expect(ofrep('checkout/page', { plan: 'pro' })).toMatchObject({ value: 'old', reason: 'DEFAULT' })
})

test('the trace names the prerequisite that did not hold and what it answered', async () => {
  await create('gate', { type: 'STRING', value: 'closed', variants: { open: 'open' } })
  await create('feature', { type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'gate', variants: ['open'] }] })
  const explained = t.app.services.evaluations.explain(SYSTEM.principal, 'feature', {})
  expect(explained).toMatchObject({ value: true, reason: 'DEFAULT' })
  expect(explained.trace).toEqual([
    {
      kind: 'prerequisite',
      flag: 'gate',
      variants: ['open'],
      holds: false,
      answered: { value: 'closed', variant: 'value', reason: 'STATIC' },
    },
  ])
})

test("the trace's closing sentence says a prerequisite that did not hold chose the default, not that no rule did", async () => {
  await create('gate', { type: 'BOOLEAN', value: false })
  await create('feature', {
    type: 'BOOLEAN',
    value: false,
    targeting: { if: [true, 'true'] },
    prerequisites: [{ flag: 'gate', variants: ['true'] }],
  })
  const closing = () =>
    (explainAnswer(t.app.services.evaluations, SYSTEM.principal, 'feature', {}).trace as { text: string }[]).at(-1)?.text
  expect(closing()).toBe('gate did not answer "true": the default false is served')
  await flags().update(SYSTEM, 'gate', { value: true })
  expect(closing()).toBe('the rule chose variant true: true')
})

test('a prerequisite naming no flag suggests the flag of the nearest name', async () => {
  await create('checkout/new_api', { type: 'BOOLEAN', value: true })
  const err = await refusal(create('page', { type: 'BOOLEAN', prerequisites: [{ flag: 'checkout/newapi', variants: ['true'] }] }))
  expect(err.message).toBe(
    'prerequisites[0].flag: page requires checkout/newapi, and there is no flag named so; did you mean "checkout/new_api"?',
  )
})

test('writes that would break the graph are refused with what they name, and change nothing', async () => {
  await create('a', { type: 'BOOLEAN', value: true })
  await create('b', { type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'a', variants: ['true'] }] })
  expect(await refusal(create('c', { type: 'BOOLEAN', prerequisites: [{ flag: 'nope', variants: ['true'] }] }))).toMatchObject({
    code: 'INVALID_REQUEST',
    details: { field: 'prerequisites[0].flag' },
  })
  expect(await refusal(create('c', { type: 'BOOLEAN', prerequisites: [{ flag: 'a', variants: ['maybe'] }] }))).toMatchObject({
    details: { field: 'prerequisites[0].variants[0]' },
  })
  const cycle = await refusal(flags().update(SYSTEM, 'a', { prerequisites: [{ flag: 'b', variants: ['true'] }] }))
  expect(cycle.message).toContain('a cycle: a requires b requires a')
  expect(await refusal(flags().remove(SYSTEM, 'a'))).toMatchObject({ code: 'CONFLICT', details: { dependents: ['b'] } })
  expect(await refusal(flags().archive(SYSTEM, 'a'))).toMatchObject({ code: 'CONFLICT', details: { dependents: ['b'] } })
  expect(await refusal(flags().update(SYSTEM, 'a', { type: 'STRING', value: 'x' }))).toMatchObject({ code: 'CONFLICT' })
  // nothing changed
  expect(flags().get(SYSTEM.principal, 'a').prerequisites).toBeUndefined()
  expect(flags().get(SYSTEM.principal, 'a').type).toBe('BOOLEAN')
})

test('a variant a dependent names cannot be removed, and chains stop at five links', async () => {
  await create('v', { type: 'STRING', value: 'x', variants: { on: 'on' } })
  await create('w', { type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'v', variants: ['on'] }] })
  expect(await refusal(flags().update(SYSTEM, 'v', { variants: null }))).toMatchObject({ code: 'CONFLICT', details: { dependents: ['w'] } })
  // f0 ← f1 ← … ← f5 is five links below f5: allowed; a sixth is not
  await create('f0', { type: 'BOOLEAN', value: true })
  for (let i = 1; i <= 5; i++)
    await create(`f${i}`, { type: 'BOOLEAN', value: true, prerequisites: [{ flag: `f${i - 1}`, variants: ['true'] }] })
  const sixth = await refusal(create('f6', { type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'f5', variants: ['true'] }] }))
  expect(sixth.message).toContain('chain of 6')
  // lengthening from below counts too
  await create('base', { type: 'BOOLEAN', value: true })
  expect(await refusal(flags().update(SYSTEM, 'f0', { prerequisites: [{ flag: 'base', variants: ['true'] }] }))).toMatchObject({
    code: 'INVALID_REQUEST',
  })
})

test('flagd-core on the flagd export answers as OFREP for 500 contexts: a prerequisite with a split and a rollout, in a chain', async () => {
  setSystemTime(new Date(START + 3 * 86_400_000))
  now = START + 3 * 86_400_000
  // the split's rollout half-way through its week at the injected time
  const window = { start: new Date(START).toISOString(), end: new Date(START + 7 * 86_400_000).toISOString() }
  for (const [name, body] of prerequisiteChain('', window)) await create(name, body)
  const doc = JSON.parse(t.app.services.migrations.exportFlagd(SYSTEM.principal).text)
  const differences: string[] = []
  for (let i = 0; i < 500; i++) {
    const context = chainContext(i)
    for (const name of askedOf('')) {
      const mine = ofrep(name, context)
      const theirs = oracle(doc, name, context)
      if (JSON.stringify(mine.value) !== JSON.stringify(theirs.value))
        differences.push(`${name} ${JSON.stringify(context)}: ${mine.value} vs ${theirs.value}`)
    }
  }
  expect(differences).toEqual([])
  // both outcomes of the top flag happen, so the comparison saw both sides of each prerequisite
  const values = new Set(Array.from({ length: 200 }, (_, i) => ofrep('top', { targetingKey: `k${i}` }).value))
  expect(values).toEqual(new Set(['fancy', 'plain']))
})

test('prerequisites change what a protected environment serves: a write without flag:bypass is refused there, a change request brings them', async () => {
  const s = t.app.services
  await create('gate', { type: 'BOOLEAN', value: false })
  await create('feature', { type: 'BOOLEAN', value: true })
  await s.environments.put(SYSTEM, t.app.config.environment, { protected: true, requiredApprovals: 1 })
  const user = (id: string, permissions: string[]) => ({
    principal: { kind: 'user', userId: id, username: id, sessionId: `ses_${id}`, permissions, flagPrefixes: [] } as never,
    requestId: `req_${id}`,
  })
  const dev = user('usr_dev', ['flag:read', 'flag:write'])
  const lead = user('usr_lead', ['flag:read', 'flag:approve'])
  const requiring = { prerequisites: [{ flag: 'gate', variants: ['true'] }] }
  expect(await refusal(flags().update(dev, 'feature', requiring))).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED' })
  expect(ofrep('feature')).toMatchObject({ value: true, reason: 'STATIC' })
  const made = await s.changeRequests.create(dev, {
    environment: t.app.config.environment,
    title: 'require the gate',
    changes: [{ flag: 'feature', set: requiring }],
  })
  await s.changeRequests.approve(lead, made.id, {})
  await s.changeRequests.apply(dev, made.id)
  expect(ofrep('feature')).toMatchObject({ value: true, reason: 'DEFAULT' })
})

test('a prerequisite changed in one environment gives its dependents a new revision there only', async () => {
  const s = t.app.services
  const home = t.app.config.environment
  await s.environments.put(SYSTEM, 'staging', {})
  await create('gate', { type: 'BOOLEAN', value: true })
  await create('feature', { type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'gate', variants: ['true'] }] })
  const seen = (env: string) => {
    const view = flags().get(SYSTEM.principal, 'feature', env)
    return view.servedRevision ?? view.revision
  }
  const [homeBefore, stagingBefore] = [seen(home), seen('staging')]
  await flags().update(SYSTEM, 'gate', { value: false }, undefined, undefined, 'staging')
  expect(seen('staging')).toBeGreaterThan(stagingBefore)
  expect(seen(home)).toBe(homeBefore)
  // a shared change of the prerequisite reaches every environment
  await flags().update(SYSTEM, 'gate', { metadata: { team: 'core' } })
  expect(seen(home)).toBeGreaterThan(homeBefore)
})

test('an import dry run says a cycle it would make is refused, as the import itself is', async () => {
  const s = t.app.services
  await create('gate', { type: 'BOOLEAN', value: true })
  await create('feature', { type: 'BOOLEAN', value: true, prerequisites: [{ flag: 'gate', variants: ['true'] }] })
  const doc = structuredClone(s.migrations.exportDocument(SYSTEM.principal).document) as { flags: Record<string, Record<string, unknown>> }
  doc.flags.gate = { ...doc.flags.gate, prerequisites: [{ flag: 'feature', variants: ['true'] }] }
  const options = { mode: 'merge', values: 'overwrite', dryRun: true } as const
  const dry = await s.migrations.importDocument(SYSTEM, doc, options, 'import-upload')
  expect(dry.applyError).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(dry.applyError?.message).toContain('cycle')
  const wet = await refusal(s.migrations.importDocument(SYSTEM, doc, { ...options, dryRun: false }, 'import-upload'))
  expect(wet.code).toBe(dry.applyError?.code as string)
  expect(flags().get(SYSTEM.principal, 'gate').prerequisites ?? []).toEqual([])
})
