/**
 * docs/targeting.md#rules–19.2 and docs/targeting.md#rules over HTTP: flags with variants, rules, enabled and metadata, the
 * NUMBER and OBJECT types, validation pointing into the rule, and what OFREP answers for them
 * (single and bulk), including the bulk ETag over the whole context and the context limits.
 */

import { expect, test } from 'bun:test'
import { createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
const group = scenarioGroup(
  async () => {
    t = await createTestApp()
  },
  () => t.close(),
)

const create = (body: Record<string, unknown>) => t.req('POST', '/api/flags', { token: t.adminToken, body })
const update = (name: string, body: Record<string, unknown>) => t.req('PUT', `/api/flags/${name}`, { token: t.adminToken, body })
const evaluate = (key: string, context: Record<string, unknown> = {}) =>
  t.req('POST', `/ofrep/v1/evaluate/flags/${key}`, { token: t.adminToken, body: { context } })
const bulk = (context: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  t.req('POST', '/ofrep/v1/evaluate/flags', { token: t.adminToken, body: { context }, headers })

const checkout = {
  name: 't/checkout',
  type: 'STRING',
  defaultValue: 'classic',
  variants: { classic: 'classic', new: 'new-flow', beta: 'beta-flow' },
  targeting: {
    if: [
      { ends_with: [{ var: 'email' }, '@example.com'] },
      'beta',
      { sem_ver: [{ var: 'appVersion' }, '>=', '2.1.0'] },
      {
        fractional: [
          ['new', 50],
          ['classic', 50],
        ],
      },
      null,
    ],
  },
  metadata: { owner: 'team-checkout', ticket: 42 },
}

group('flags with rules', () => {
  test('create answers the flag with its targeting fields; read shows them; enabled defaults to true', async () => {
    const res = await create(checkout)
    expect(res.status).toBe(201)
    expect(res.body).toMatchObject({
      variants: checkout.variants,
      targeting: checkout.targeting,
      metadata: checkout.metadata,
      enabled: true,
    })
    expect((await t.req('GET', '/api/flags/t/checkout', { token: t.adminToken })).body).toEqual(res.body)
  })

  test('OFREP: a matching rule serves its variant; no match serves the default with DEFAULT; metadata is carried', async () => {
    expect((await evaluate('t/checkout', { email: 'ann@example.com' })).body).toEqual({
      key: 't/checkout',
      value: 'beta-flow',
      reason: 'TARGETING_MATCH',
      variant: 'beta',
      metadata: { owner: 'team-checkout', ticket: 42, type: 'STRING', revision: 1 },
    })
    const split = await evaluate('t/checkout', { appVersion: '2.3.0', targetingKey: 'user-1' })
    expect(split.body).toMatchObject({ reason: 'TARGETING_MATCH' })
    expect(['new-flow', 'classic']).toContain(split.body.value)
    // sticky: the same user gets the same answer
    expect((await evaluate('t/checkout', { appVersion: '2.3.0', targetingKey: 'user-1' })).body.value).toBe(split.body.value)
    // the default's variant is the listed variant holding it, as the flagd document names it
    expect((await evaluate('t/checkout', { appVersion: '1.0.0' })).body).toMatchObject({
      value: 'classic',
      reason: 'DEFAULT',
      variant: 'classic',
    })
    const exported = await t.req('GET', '/api/migrations/export?format=flagd', { token: t.adminToken })
    expect(exported.body.flags['t/checkout'].defaultVariant).toBe('classic')
  })

  test('disabled: DISABLED with no value or variant, the definition kept; enabled again it serves as before', async () => {
    expect((await update('t/checkout', { enabled: false })).body).toMatchObject({ enabled: false, targeting: checkout.targeting })
    const off = await evaluate('t/checkout', { email: 'ann@example.com' })
    expect(off.status).toBe(200)
    expect(off.body).toEqual({
      key: 't/checkout',
      reason: 'DISABLED',
      metadata: { owner: 'team-checkout', ticket: 42, type: 'STRING', revision: 2 },
    })
    await update('t/checkout', { enabled: true })
    expect((await evaluate('t/checkout', { email: 'ann@example.com' })).body.value).toBe('beta-flow')
  })

  test('a rule that names no variant at run time is 400 GENERAL from the single route and an error item in bulk', async () => {
    expect(
      (
        await create({
          name: 't/bad-run',
          type: 'STRING',
          variants: { red: 'r' },
          targeting: { if: [true, { var: 'color' }] },
        })
      ).status,
    ).toBe(201)
    const one = await evaluate('t/bad-run', { color: 'purple' })
    expect(one.status).toBe(400)
    expect(one.body).toEqual({ key: 't/bad-run', errorCode: 'GENERAL', errorDetails: expect.stringContaining('"purple"') })
    expect((await evaluate('t/bad-run', { color: 'red' })).body).toMatchObject({ value: 'r', variant: 'red' })
    const all = await bulk({ color: 'purple' })
    expect(all.status).toBe(200)
    expect(all.body.flags.find((f: { key: string }) => f.key === 't/bad-run')).toEqual({
      key: 't/bad-run',
      errorCode: 'GENERAL',
      errorDetails: expect.any(String),
    })
  })

  test('built-in variants: BOOLEAN true/false, ENUM values, AB-TEST A/B; a listed one replaces a built-in', async () => {
    await create({ name: 't/bool', type: 'BOOLEAN', targeting: { '==': [{ var: 'plan' }, 'pro'] } })
    expect((await evaluate('t/bool', { plan: 'pro' })).body).toMatchObject({ value: true, variant: 'true', reason: 'TARGETING_MATCH' })
    expect((await evaluate('t/bool', { plan: 'free' })).body).toMatchObject({ value: false, variant: 'false' })
    await create({ name: 't/enum', type: 'ENUM', enumValues: ['light', 'dark'], targeting: { if: [{ var: 'night' }, 'dark', 'light'] } })
    expect((await evaluate('t/enum', { night: true })).body).toMatchObject({ value: 'dark', variant: 'dark' })
    await create({
      name: 't/ab',
      type: 'AB-TEST',
      targeting: {
        fractional: [
          ['A', 0],
          ['B', 1],
        ],
      },
    })
    expect((await evaluate('t/ab', { targetingKey: 'u' })).body).toMatchObject({ value: 'B', reason: 'TARGETING_MATCH' })
    await create({ name: 't/bool2', type: 'BOOLEAN', variants: { true: false }, targeting: { '==': [1, 1] } })
    expect((await evaluate('t/bool2')).body).toMatchObject({ value: false, variant: 'true' })
  })

  test('no default: defaultValue null answers DEFAULT without a value', async () => {
    const res = await create({ name: 't/nodefault', type: 'INTEGER', defaultValue: null })
    expect(res.body.defaultValue).toBeNull()
    expect((await evaluate('t/nodefault')).body).toEqual({
      key: 't/nodefault',
      reason: 'DEFAULT',
      metadata: { type: 'INTEGER', revision: 1 },
    })
  })
})

group('validation points into the rule and changes nothing', () => {
  test.each([
    [{ targeting: { if: [{ regex: ['a'] }, 'on'] } }, 'targeting.if[0]', 'unknown operator'],
    [{ targeting: { if: [true, 'maybe', 'on'] } }, 'targeting.if[1]', 'not a variant'],
    [
      {
        targeting: {
          fractional: [
            ['on', -1],
            ['off', 2],
          ],
        },
      },
      'targeting.fractional[0][1]',
      'non-negative integer',
    ],
    [{ targeting: { if: [{ $ref: 'ghost' }, 'on'] } }, 'targeting.if[0].$ref', 'segment ghost does not exist'],
    [{ targeting: 'on' }, 'targeting', 'must be a rule'],
    [{ variants: { 'bad name': 'x' } }, 'variants.bad name', 'variant name'],
    [{ variants: { a: 5 } }, 'variants.a', 'must be a string'],
    [{ metadata: { owner: { nested: true } } }, 'metadata.owner', 'string, a number or a boolean'],
    [{ enabled: 'yes' }, 'enabled', 'true or false'],
  ])('%j → 400 naming %s', async (extra, field, reason) => {
    const res = await create({ name: 'v/x', type: 'STRING', variants: { on: 'on', off: 'off' }, ...extra })
    expect(res.status).toBe(400)
    expect(res.body.error.details.errors).toContainEqual({ field, reason: expect.stringContaining(reason) })
    expect((await t.req('GET', '/api/flags/v/x', { token: t.adminToken })).status).toBe(404)
  })

  test('tightening a constraint that a variant breaks is refused naming the variant', async () => {
    await create({ name: 'v/int', type: 'INTEGER', variants: { low: 1, high: 50 } })
    const res = await update('v/int', { maxValue: 10 })
    expect(res.status).toBe(400)
    expect(res.body.error.details.errors).toContainEqual({ field: 'variants.high', reason: '50 is above maxValue 10' })
  })

  test('null removes variants, targeting and metadata', async () => {
    await create({ name: 'v/rm', type: 'BOOLEAN', targeting: { '==': [1, 1] }, metadata: { a: 1 } })
    const res = await update('v/rm', { targeting: null, metadata: null })
    expect(res.status).toBe(200)
    expect(res.body.targeting).toBeUndefined()
    expect(res.body.metadata).toBeUndefined()
  })
})

group('NUMBER and OBJECT', () => {
  test('NUMBER: decimals within decimal bounds; OFREP answers a number', async () => {
    expect((await create({ name: 'n/rate', type: 'NUMBER', value: 0.15, minValue: 0, maxValue: 0.5 })).status).toBe(201)
    expect((await create({ name: 'n/bad', type: 'NUMBER', value: 0.75, maxValue: 0.5 })).body.error.details.errors).toEqual([
      { field: 'value', reason: '0.75 is above maxValue 0.5' },
    ])
    expect((await evaluate('n/rate')).body).toMatchObject({ value: 0.15, metadata: { type: 'NUMBER' } })
  })

  test('OBJECT: a JSON object satisfying jsonSchema; variants too; OFREP answers the object', async () => {
    const schema = { type: 'object', required: ['columns'], properties: { columns: { type: 'integer', minimum: 1 } } }
    const res = await create({
      name: 'o/gallery',
      type: 'OBJECT',
      defaultValue: { columns: 2 },
      jsonSchema: schema,
      variants: { wide: { columns: 4 } },
      targeting: { if: [{ '>': [{ var: 'width' }, 1200] }, 'wide'] },
    })
    expect(res.status).toBe(201)
    expect((await evaluate('o/gallery', { width: 1600 })).body).toMatchObject({ value: { columns: 4 }, variant: 'wide' })
    expect((await evaluate('o/gallery', { width: 800 })).body).toMatchObject({ value: { columns: 2 }, reason: 'DEFAULT' })
    const bad = await create({ name: 'o/bad', type: 'OBJECT', jsonSchema: schema, defaultValue: { columns: 1 }, value: { columns: 0 } })
    expect(bad.body.error.details.errors).toHaveLength(1)
    expect(bad.body.error.details.errors[0]).toMatchObject({ field: 'value', reason: expect.stringContaining('jsonSchema') })
    const unusable = await create({ name: 'o/bad2', type: 'OBJECT', jsonSchema: { $ref: 'https://example.com/s.json' } })
    expect(unusable.body.error.details.errors[0]).toMatchObject({
      field: 'jsonSchema',
      reason: expect.stringContaining('not a usable JSON Schema'),
    })
    expect((await create({ name: 'o/proto', type: 'OBJECT', value: JSON.parse('{"a": {"__proto__": {}}}') })).status).toBe(400)
  })

  test('a catastrophic pattern in a jsonSchema never stalls: refused or bounded', async () => {
    const res = await create({
      name: 'o/evil',
      type: 'OBJECT',
      jsonSchema: { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } },
      value: { s: `${'a'.repeat(60_000)}!` },
    })
    expect(res.status).toBe(400)
  })
})

group('bulk ETag and context limits', () => {
  test('with a rule, any context attribute counts for the ETag; equal contexts in any key order share it', async () => {
    const before = await bulk({ plan: 'pro' })
    expect(before.headers.get('etag')).toBe(before.headers.get('etag'))
    expect((await bulk({ plan: 'free' })).headers.get('etag')).toBe(before.headers.get('etag')) // no rule yet: only targetingKey counts
    await create({ name: 'e/rule', type: 'BOOLEAN', targeting: { '==': [{ var: 'plan' }, 'pro'] } })
    const a = await bulk({ plan: 'pro', email: 'x@y' })
    const b = await bulk({ email: 'x@y', plan: 'pro' })
    const c = await bulk({ plan: 'free', email: 'x@y' })
    expect(a.headers.get('etag')).toBe(b.headers.get('etag'))
    expect(a.headers.get('etag')).not.toBe(c.headers.get('etag'))
    expect((await bulk({ email: 'x@y', plan: 'pro' }, { 'if-none-match': a.headers.get('etag') as string })).status).toBe(304)
  })

  test('a context over 64 KiB or 16 levels deep is 400 INVALID_CONTEXT', async () => {
    const big = await evaluate('t/bool', { blob: 'x'.repeat(70_000) })
    expect(big.status).toBe(400)
    expect(big.body).toMatchObject({ errorCode: 'INVALID_CONTEXT', errorDetails: expect.stringContaining('65536') })
    let deep: Record<string, unknown> = { leaf: 1 }
    for (let i = 0; i < 17; i++) deep = { d: deep }
    const nested = await evaluate('t/bool', deep)
    expect(nested.status).toBe(400)
    expect(nested.body).toMatchObject({ errorCode: 'INVALID_CONTEXT', errorDetails: expect.stringContaining('16 levels') })
  })
})

group('why this value (POST /api/flags/{name}/evaluate)', () => {
  test('the steps in order, in words, with the bucket and the conclusion', async () => {
    await t.req('PUT', '/api/segments/staff', { token: t.adminToken, body: { rule: { ends_with: [{ var: 'email' }, '@example.com'] } } })
    await create({
      name: 'w/new_flow',
      type: 'BOOLEAN',
      targeting: {
        if: [
          { '==': [{ var: 'plan' }, 'pro'] },
          'true',
          { $ref: 'staff' },
          'true',
          {
            fractional: [
              ['true', 20],
              ['false', 80],
            ],
          },
        ],
      },
    })
    const res = await t.req('POST', '/api/flags/w/new_flow/evaluate', {
      token: t.adminToken,
      body: { context: { plan: 'free', email: 'bob@other.org', targetingKey: 'user-9' } },
    })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ key: 'w/new_flow', reason: 'TARGETING_MATCH', metadata: { type: 'BOOLEAN' } })
    const texts = res.body.trace.map((s: { text: string }) => s.text)
    expect(texts[0]).toBe('targeting.if[0]: plan is "pro": no')
    expect(texts[1]).toBe('segment staff did not match')
    expect(texts[2]).toBe('targeting.if[2]: in segment staff: no')
    expect(texts[3]).toMatch(
      /^targeting\.if\[4\]\.fractional: "w\/new_flowuser-9" falls in bucket \d+ of 100 \(\d+\.\d %\) → "(true|false)"$/,
    )
    expect(texts[4]).toBe(`the rule chose variant ${res.body.variant}: ${JSON.stringify(res.body.value)}`)
    // the same answer as OFREP
    const ofrep = await evaluate('w/new_flow', { plan: 'free', email: 'bob@other.org', targetingKey: 'user-9' })
    expect(ofrep.body.value).toBe(res.body.value)
  })

  test('a disabled flag, a flag without rules, a missing flag, a bad context, a POST elsewhere', async () => {
    await create({ name: 'w/off', type: 'BOOLEAN', enabled: false })
    const off = await t.req('POST', '/api/flags/w/off/evaluate', { token: t.adminToken, body: {} })
    expect(off.body.trace).toEqual([{ kind: 'result', text: 'the flag is disabled: applications get their own default' }])
    await create({ name: 'w/plain', type: 'INTEGER', value: 3 })
    const plain = await t.req('POST', '/api/flags/w/plain/evaluate', { token: t.adminToken, body: { context: {} } })
    expect(plain.body.trace.at(-1).text).toBe("no rule applies: the flag's value 3 is served")
    expect((await t.req('POST', '/api/flags/w/none/evaluate', { token: t.adminToken, body: {} })).status).toBe(404)
    const bad = await t.req('POST', '/api/flags/w/plain/evaluate', { token: t.adminToken, body: { context: [] } })
    expect(bad.status).toBe(400)
    expect(bad.body.error.details.field).toBe('context')
    const elsewhere = await t.req('POST', '/api/flags/w/plain', { token: t.adminToken, body: {} })
    expect(elsewhere.status).toBe(405)
  })
})
