/**
 * docs/targeting.md#flagd-format: flagd's document both ways. The export validates against flagd's published schema
 * (the fixture copy of open-feature/flagd-schemas), answers If-None-Match, and OpenFeature's own
 * evaluator (`@openfeature/flagd-core`) loaded with it gives the same value and reason as OFREP for
 * every flag and context. flagd-testbed's `testkit-flags.json` imports, and evaluates over OFREP as
 * flagd-core evaluates the original.
 */

import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import Ajv from 'ajv'
import { oracle } from '../helpers/flagd-oracle.ts'
import { createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

const fixtures = join(import.meta.dir, '../fixtures/openfeature')
const schemaText = (name: string) => JSON.parse(readFileSync(join(fixtures, 'flagd-schemas/json', name), 'utf8'))
const ajv = new Ajv({ strict: false, allErrors: true })
ajv.addSchema(schemaText('targeting.json'))
const validateFlagd = ajv.compile(schemaText('flags.json'))
const testkit = JSON.parse(readFileSync(join(fixtures, 'flagd-testbed/evaluator/flags/testkit-flags.json'), 'utf8'))

let t: TestApp
const group = scenarioGroup(
  async () => {
    t = await createTestApp()
  },
  () => t.close(),
)
const ofrep = (key: string, context: Record<string, unknown>) =>
  t.req('POST', `/ofrep/v1/evaluate/flags/${key}`, { token: t.adminToken, body: { context } })

const CONTEXTS: Record<string, unknown>[] = [
  {},
  { targetingKey: 'user-1', email: 'ann@example.com', plan: 'pro', appVersion: '2.3.0' },
  { targetingKey: 'user-2', email: 'bob@other.org', plan: 'free', appVersion: '1.0.0' },
  { targetingKey: 'jon@company.com', tier: 'premium', email: 'ballmer@macrosoft.com', version: '2.0.0', user: { name: 'jack' } },
  { targetingKey: '5c3d8535-f81a-4478-a6d3-afaa4d51199e', id: 'abc-xyz', version: '3.1.0', color: 'red', user: { name: 'nine' } },
]

/** OFREP's answer as flagd would word it (flagd says TARGETING_MATCH where OFREP here says SPLIT). */
async function ofrepAnswer(key: string, context: Record<string, unknown>) {
  const res = await ofrep(key, context)
  if (res.status !== 200) return { reason: 'ERROR', errorCode: res.body.errorCode }
  const reason = res.body.reason === 'SPLIT' ? 'TARGETING_MATCH' : res.body.reason
  return { ...(res.body.value === undefined ? {} : { value: res.body.value }), reason }
}
const flagdAnswer = (document: { flags: Record<string, unknown> }, key: string, context: Record<string, unknown>) => {
  const r = oracle(document, key, context)
  return {
    ...(r.value === undefined || r.reason === 'DISABLED' ? {} : { value: r.value }),
    reason: r.reason,
    ...(r.errorCode ? { errorCode: r.errorCode } : {}),
  }
}

group('export as flagd', () => {
  test("validates against flagd's schema; flagd-core gives OFREP's value and reason for every flag and context", async () => {
    const admin = { token: t.adminToken }
    await t.req('PUT', '/api/segments/staff', { ...admin, body: { rule: { ends_with: [{ var: 'email' }, '@example.com'] } } })
    await t.req('PUT', '/api/segments/insiders', {
      ...admin,
      body: { or: undefined, rule: { or: [{ $ref: 'staff' }, { '==': [{ var: 'plan' }, 'pro'] }] } },
    })
    const flags = [
      { name: 'x/static', type: 'BOOLEAN', value: true },
      { name: 'x/default', type: 'INTEGER', defaultValue: 7 },
      { name: 'x/nodefault', type: 'STRING', defaultValue: null },
      { name: 'x/ab', type: 'AB-TEST', chancePercentB: 30 },
      { name: 'x/ab-pinned', type: 'AB-TEST', value: 'B' },
      { name: 'x/enum', type: 'ENUM', enumValues: ['light', 'dark'], value: 'dark', targeting: { if: [{ $ref: 'insiders' }, 'light'] } },
      {
        name: 'x/num',
        type: 'NUMBER',
        value: 0.25,
        variants: { high: 0.75 },
        targeting: { if: [{ sem_ver: [{ var: 'appVersion' }, '>=', '2.0.0'] }, 'high'] },
      },
      {
        name: 'x/obj',
        type: 'OBJECT',
        value: { a: 1 },
        variants: { a: { a: 1 }, b: { b: 2 } },
        targeting: {
          fractional: [
            ['b', 50],
            ['a', 50],
          ],
        },
      },
      { name: 'x/off', type: 'BOOLEAN', value: true, enabled: false, metadata: { owner: 'me' } },
      { name: 'x/tags', type: 'TAG', enumValues: ['a', 'b'], value: ['a'] },
    ]
    for (const body of flags) {
      const made = await t.req('POST', '/api/flags', { ...admin, body })
      expect(made.status, JSON.stringify(made.body)).toBe(201)
    }
    const res = await t.req('GET', '/api/migrations/export?format=flagd', admin)
    expect(res.status).toBe(200)
    const doc = res.body
    expect(validateFlagd(doc), JSON.stringify(validateFlagd.errors?.slice(0, 3))).toBe(true)
    expect(doc.$schema).toBe('https://flagd.dev/schema/v0/flags.json')
    expect(Object.keys(doc.$evaluators)).toEqual(['insiders', 'staff'])
    // flagd does not nest $ref: a segment referring to another is written out whole
    expect(JSON.stringify(doc.$evaluators.insiders)).not.toContain('$ref')
    expect(doc.flags['x/tags']).toBeUndefined()
    expect(doc.metadata).toMatchObject({ environment: expect.any(String), omittedFlags: expect.stringContaining('x/tags') })
    for (const { name } of flags.filter((f) => f.type !== 'TAG'))
      for (const context of CONTEXTS)
        expect({ name, context, ...flagdAnswer(doc, name, context) }).toEqual({ name, context, ...(await ofrepAnswer(name, context)) })

    const etag = res.headers.get('etag') as string
    expect((await t.req('GET', '/api/migrations/export?format=flagd', { ...admin, headers: { 'if-none-match': etag } })).status).toBe(304)
    await t.req('PUT', '/api/flags/x/static', { ...admin, body: { value: false } })
    expect((await t.req('GET', '/api/migrations/export?format=flagd', { ...admin, headers: { 'if-none-match': etag } })).status).toBe(200)
    expect((await t.req('GET', '/api/migrations/export?format=yaml', admin)).status).toBe(400)
  })

  test('the migration file carries the segments; it imports back', async () => {
    const file = (await t.req('GET', '/api/migrations/export', { token: t.adminToken })).body
    expect(Object.keys(file.segments)).toEqual(['insiders', 'staff'])
    const res = await t.req('PUT', '/api/migrations?dryRun=true', { token: t.adminToken, body: file })
    expect(res.status).toBe(200)
    expect(res.body.changes).toEqual([])
    expect(res.body.segmentChanges).toBeUndefined()
  })
})

group('import a flagd document', () => {
  test('testkit-flags.json imports (without its dangling $ref); OFREP answers as flagd-core does for the original', async () => {
    const { 'ref-to-nonexistent-evaluator-flag': _dangling, ...flags } = testkit.flags
    const document = { ...testkit, flags }
    const res = await t.req('PUT', '/api/migrations', { token: t.adminToken, body: document })
    expect(res.status).toBe(200)
    expect(res.body.source).toMatchObject({ format: 'flagd' })
    expect(res.body.summary.created).toBe(Object.keys(flags).length)
    expect(res.body.segmentChanges).toEqual([{ name: 'is_ballmer', action: 'create' }])
    expect(res.body.warnings).toContainEqual({
      field: 'flags.fractional-negative-weight-flag.targeting.fractional[1][1]',
      reason: expect.stringContaining('read as 0'),
    })
    expect((await t.req('GET', '/api/flags/disabled-string-flag', { token: t.adminToken })).body).toMatchObject({
      enabled: false,
      type: 'STRING',
    })
    expect((await t.req('GET', '/api/flags/null-default-flag', { token: t.adminToken })).body).toMatchObject({
      defaultValue: null,
      valueExists: false,
    })
    const contexts = [
      ...CONTEXTS,
      { email: 'jobs@orange.com' },
      { num: 7, id: 42 },
      { targetingKey: 'ejOoVL' },
      { user: { name: 'seven' } },
    ]
    for (const key of Object.keys(flags))
      for (const context of contexts) {
        const expected = flagdAnswer(document, key, context)
        const actual = await ofrepAnswer(key, context)
        // flagd-core has no answer for a disabled flag's value (the SDK's own default applies), nor do we
        expect({ key, context, ...actual }).toEqual({ key, context, ...expected })
      }
  })

  test('the dangling $ref is refused, naming the place; a mixed-type flag too; nothing is imported', async () => {
    const res = await t.req('PUT', '/api/migrations?mode=replace', {
      token: t.adminToken,
      body: {
        flags: {
          a: testkit.flags['ref-to-nonexistent-evaluator-flag'],
          b: { state: 'ENABLED', variants: { x: 1, y: 'two' }, defaultVariant: 'x' },
        },
      },
    })
    expect(res.status).toBe(400)
    const fields = res.body.error.details.errors.map((e: { field: string }) => e.field)
    expect(fields).toEqual(['flags.a.targeting.if[0].$ref', 'flags.b.variants'])
    expect((await t.req('GET', '/api/flags/boolean-flag', { token: t.adminToken })).status).toBe(200)
  })

  test("keys with ':' and a leading '_' import unchanged and are served under them; document metadata is named as dropped", async () => {
    const res = await t.req('PUT', '/api/migrations', {
      token: t.adminToken,
      body: {
        metadata: { flagSetId: 'shop', version: 'v7', environment: 'prod' },
        flags: {
          'team:checkout': { state: 'ENABLED', variants: { on: true, off: false }, defaultVariant: 'on' },
          _internal: { state: 'ENABLED', variants: { a: 'x', b: 'y' }, defaultVariant: 'b', metadata: { owner: 'ops' } },
        },
      },
    })
    expect(res.status).toBe(200)
    expect(res.body.source).toMatchObject({ format: 'flagd', environment: 'prod' })
    expect(res.body.warnings.map((w: { field: string }) => w.field)).toEqual(['metadata.flagSetId', 'metadata.version'])
    expect((await ofrep('team:checkout', {})).body).toMatchObject({ key: 'team:checkout', value: true, variant: 'on' })
    expect((await ofrep('_internal', {})).body).toMatchObject({ key: '_internal', value: 'y', variant: 'b', metadata: { owner: 'ops' } })
    expect((await t.req('GET', '/api/flags/team:checkout', { token: t.adminToken })).body.name).toBe('team:checkout')
    const exported = await t.req('GET', '/api/migrations/export?format=flagd', { token: t.adminToken })
    expect(Object.keys(exported.body.flags)).toEqual(expect.arrayContaining(['team:checkout', '_internal']))
  })
})
