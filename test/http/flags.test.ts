/** docs/api.md#flags from outside: endpoints, names, partial updates, If-Match, regex safety, restart. */

import { expect, test } from 'bun:test'
import { stateFilePath } from '../../src/storage/json-file-store.ts'
import { readStateFile } from '../helpers/state-file.ts'
import { createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
let reader: string
let writer: string
const group = scenarioGroup(
  async () => {
    t = await createTestApp()
    reader = (await t.userWith(['flag:read'])).token
    writer = (await t.userWith(['flag:write'])).token
  },
  () => t.close(),
)

const create = (body: Record<string, unknown>, token = t.adminToken) => t.req('POST', '/api/flags', { token, body })
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

group('create', () => {
  test('201 with Location, ETag and zero defaults', async () => {
    const res = await create({ name: 'c/basic', type: 'BOOLEAN' })
    expect(res.status).toBe(201)
    expect(res.headers.get('location')).toBe('/api/flags/c/basic')
    expect(res.headers.get('etag')).toBe('"1"')
    expect(res.body).toEqual({
      name: 'c/basic',
      type: 'BOOLEAN',
      description: '',
      defaultValue: false,
      valueExists: false,
      enabled: true,
      kind: 'release',
      tags: [],
      createdAt: expect.stringMatching(ISO),
      updatedAt: expect.stringMatching(ISO),
      revision: 1,
      archived: false,
      potentiallyStale: false,
    })
    expect(Object.keys(res.body)).toEqual([
      'name',
      'type',
      'description',
      'defaultValue',
      'valueExists',
      'enabled',
      'kind',
      'tags',
      'createdAt',
      'updatedAt',
      'revision',
      'archived',
      'potentiallyStale',
    ])
  })

  test('value makes valueExists true; AB-TEST stores chancePercentB 50', async () => {
    const res = await create({ name: 'c/ab', type: 'AB-TEST', value: 'B' })
    expect(res.body).toMatchObject({ defaultValue: 'A', valueExists: true, value: 'B', chancePercentB: 50 })
  })

  test.each([
    [{ type: 'BOOLEAN' }, 'name'],
    [{ name: 'c/x' }, 'type'],
    [{ name: 'c/x', type: 'FLOAT' }, 'type'],
    [{ name: 'c//x', type: 'BOOLEAN' }, 'name'],
    [{ name: 'c/x', type: 'BOOLEAN', valueExists: true }, 'value'],
    [{ name: 'c/x', type: 'BOOLEAN', createdAt: '2020-01-01T00:00:00.000Z' }, 'createdAt'],
    [{ name: 'c/x', type: 'INTEGER', minValue: 1 }, 'defaultValue'],
    [{ name: 'c/x', type: 'STRING', enumValues: ['a'] }, 'enumValues'],
  ])('%j → 400 naming %s, nothing created', async (body, field) => {
    const res = await create(body)
    expect(res.status).toBe(400)
    expect(res.body.error.details.errors.map((e: { field: string }) => e.field)).toContain(field)
    expect((await t.req('GET', '/api/flags/c/x', { token: reader })).status).toBe(404)
  })

  test('a body that is not an object is 400', async () => {
    for (const raw of ['[]', '"x"', '1', 'null']) {
      const res = await t.req('POST', '/api/flags', { token: t.adminToken, rawBody: raw, headers: { 'content-type': 'application/json' } })
      expect(res.status).toBe(400)
    }
  })

  test('taken name and flag/group collisions are 409', async () => {
    await create({ name: 'g/leaf', type: 'BOOLEAN' })
    expect((await create({ name: 'g/leaf', type: 'BOOLEAN' })).status).toBe(409)
    expect((await create({ name: 'g', type: 'BOOLEAN' })).status).toBe(409)
    expect((await create({ name: 'g/leaf/child', type: 'BOOLEAN' })).status).toBe(409)
    expect((await create({ name: 'g/leaf2', type: 'BOOLEAN' })).status).toBe(201)
    expect((await create({ name: 'G', type: 'BOOLEAN' })).status).toBe(201) // case-sensitive
  })
})

group('names of 1 to 5 segments through every method, literal and %2F', () => {
  const names = ['one', 'a1/two', 'a1/b/three', 'a1/b/c/four', 'a1/b/c/d/five']
  test.each(names)('%s', async (name) => {
    expect((await create({ name, type: 'INTEGER', value: 1 })).status).toBe(201)
    for (const path of [name, name.replaceAll('/', '%2F'), name.replaceAll('/', '%2f')]) {
      const got = await t.req('GET', `/api/flags/${path}`, { token: reader })
      expect(got.status).toBe(200)
      expect(got.body.name).toBe(name)
    }
    const put = await t.req('PUT', `/api/flags/${name.replaceAll('/', '%2F')}`, { token: writer, body: { value: 2 } })
    expect(put.body).toMatchObject({ name, value: 2, revision: 2 })
    const del = await t.req('DELETE', `/api/flags/${name}`, { token: writer })
    expect(del.body).toEqual({ deleted: true, name })
    expect((await t.req('GET', `/api/flags/${name}`, { token: reader })).status).toBe(404)
    expect((await t.req('DELETE', `/api/flags/${name}`, { token: writer })).status).toBe(404)
  })

  test('bad percent-encoding is 400; odd names are 404', async () => {
    expect((await t.req('GET', '/api/flags/a%zz', { token: reader })).status).toBe(400)
    for (const path of ['__proto__', 'constructor', 'nope/nope', 'a1%2F'])
      expect((await t.req('GET', `/api/flags/${path}`, { token: reader })).status).toBe(404)
  })
})

group('list', () => {
  test('sorted by name; ?prefix= filters; unknown query is 400', async () => {
    for (const name of ['l/b', 'l/a', 'l/a.x', 'l2/z', 'l/B']) await create({ name, type: 'BOOLEAN' })
    const all = await t.req('GET', '/api/flags', { token: reader })
    const names: string[] = all.body.map((f: { name: string }) => f.name)
    expect(names).toEqual([...names].sort())
    const some = await t.req('GET', '/api/flags?prefix=l/', { token: reader })
    expect(some.body.map((f: { name: string }) => f.name)).toEqual(['l/B', 'l/a', 'l/a.x', 'l/b'])
    expect((await t.req('GET', '/api/flags?prefix=zzz', { token: reader })).body).toEqual([])
    expect((await t.req('GET', '/api/flags?prefx=l/', { token: reader })).status).toBe(400)
  })
})

group('update', () => {
  test('partial update, clearing the value, removing a constraint, read-only fields ignored', async () => {
    const flag = (await create({ name: 'u/int', type: 'INTEGER', defaultValue: 3, value: 5, minValue: 1, maxValue: 10 })).body
    const back = await t.req('PUT', '/api/flags/u/int', { token: writer, body: { ...flag, value: 6, revision: 99, createdAt: 'x' } })
    expect(back.status).toBe(200)
    expect(back.body).toMatchObject({ value: 6, revision: 2, createdAt: flag.createdAt })
    expect(back.headers.get('etag')).toBe('"2"')
    const cleared = await t.req('PUT', '/api/flags/u/int', { token: writer, body: { valueExists: false } })
    expect(cleared.body.valueExists).toBe(false)
    expect('value' in cleared.body).toBe(false)
    const unbounded = await t.req('PUT', '/api/flags/u/int', { token: writer, body: { maxValue: null, value: 1000 } })
    expect(unbounded.body).toMatchObject({ value: 1000, minValue: 1 })
    expect('maxValue' in unbounded.body).toBe(false)
  })

  test('a PUT that changes nothing answers 200 without a new revision or a write', async () => {
    const flag = (await create({ name: 'u/same', type: 'STRING', value: 'x' })).body
    const commits = t.app.store.writes
    const res = await t.req('PUT', '/api/flags/u/same', { token: writer, body: { value: 'x', description: '' } })
    expect(res.status).toBe(200)
    expect(res.body).toEqual(flag)
    expect(t.app.store.writes).toBe(commits)
  })

  test('tightening a constraint the value or default breaks is 400 and changes nothing', async () => {
    await create({ name: 'u/tight', type: 'INTEGER', defaultValue: 2, value: 8, maxValue: 10 })
    const res = await t.req('PUT', '/api/flags/u/tight', { token: writer, body: { maxValue: 5 } })
    expect(res.status).toBe(400)
    expect(res.body.error.details.field).toBe('value')
    expect(res.body.error.message).toContain('8 is above maxValue 5')
    const res2 = await t.req('PUT', '/api/flags/u/tight', { token: writer, body: { minValue: 3, value: 5 } })
    expect(res2.body.error.details.field).toBe('defaultValue')
    const now = await t.req('GET', '/api/flags/u/tight', { token: reader })
    expect(now.body).toMatchObject({ value: 8, maxValue: 10, revision: 1 })
  })

  test('tightening tables for every type', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>, string][] = [
      [{ type: 'STRING', value: 'hello' }, { maxLength: 4 }, 'value'],
      [{ type: 'STRING', defaultValue: 'abc' }, { regexPattern: '^x' }, 'defaultValue'],
      [{ type: 'ENUM', enumValues: ['a', 'b'], value: 'b' }, { enumValues: ['a'] }, 'value'],
      [{ type: 'TAG', enumValues: ['a', 'b'], value: ['a', 'b'] }, { maxCount: 1 }, 'value'],
      [{ type: 'TAG', enumValues: ['a', 'b'] }, { minCount: 1 }, 'defaultValue'],
    ]
    let i = 0
    for (const [definition, patch, field] of cases) {
      const name = `u/tt${i++}`
      expect((await create({ name, ...definition })).status).toBe(201)
      const res = await t.req('PUT', `/api/flags/${name}`, { token: writer, body: patch })
      expect(res.status).toBe(400)
      expect(res.body.error.details.field).toBe(field)
    }
  })

  test('a type change takes nothing of the old type', async () => {
    await create({ name: 'u/morph', type: 'INTEGER', defaultValue: 3, value: 5, maxValue: 10, description: 'kept' })
    const bad = await t.req('PUT', '/api/flags/u/morph', { token: writer, body: { type: 'ENUM' } })
    expect(bad.status).toBe(400)
    expect(bad.body.error.details.field).toBe('enumValues')
    const res = await t.req('PUT', '/api/flags/u/morph', { token: writer, body: { type: 'ENUM', enumValues: ['x', 'y'] } })
    expect(res.body).toMatchObject({
      type: 'ENUM',
      defaultValue: 'x',
      valueExists: false,
      enumValues: ['x', 'y'],
      description: 'kept',
      revision: 2,
    })
    expect('maxValue' in res.body).toBe(false)
  })

  test('rename keeps createdAt and revision history; taken names are 409', async () => {
    const before = (await create({ name: 'r/old', type: 'BOOLEAN' })).body
    await create({ name: 'r/taken', type: 'BOOLEAN' })
    expect((await t.req('PUT', '/api/flags/r/old', { token: writer, body: { name: 'r/taken' } })).status).toBe(409)
    expect((await t.req('PUT', '/api/flags/r/old', { token: writer, body: { name: 'r/taken/deeper' } })).status).toBe(409)
    expect((await t.req('PUT', '/api/flags/r/old', { token: writer, body: { name: 'r/x y' } })).status).toBe(400)
    const moved = await t.req('PUT', '/api/flags/r/old', { token: writer, body: { name: 'r/old/into/group' } })
    expect(moved.status).toBe(200)
    expect(moved.body).toMatchObject({ name: 'r/old/into/group', createdAt: before.createdAt, revision: 2 })
    expect((await t.req('GET', '/api/flags/r/old', { token: reader })).status).toBe(404)
  })

  test('every change bumps revision and updatedAt', async () => {
    const first = (await create({ name: 'u/rev', type: 'INTEGER' })).body
    await Bun.sleep(2)
    const second = (await t.req('PUT', '/api/flags/u/rev', { token: writer, body: { value: 1 } })).body
    expect(second.revision).toBe(2)
    expect(second.updatedAt > first.updatedAt).toBe(true)
  })
})

group('If-Match', () => {
  test('stale revision → 412 and nothing changes, on PUT and DELETE', async () => {
    await create({ name: 'm/flag', type: 'INTEGER' })
    await t.req('PUT', '/api/flags/m/flag', { token: writer, body: { value: 1 } })
    const stale = await t.req('PUT', '/api/flags/m/flag', { token: writer, body: { value: 2 }, headers: { 'if-match': '"1"' } })
    expect(stale.status).toBe(412)
    expect(stale.body.error.code).toBe('PRECONDITION_FAILED')
    expect((await t.req('DELETE', '/api/flags/m/flag', { token: writer, headers: { 'if-match': '"1"' } })).status).toBe(412)
    expect((await t.req('GET', '/api/flags/m/flag', { token: reader })).body.value).toBe(1)
    expect((await t.req('PUT', '/api/flags/m/flag', { token: writer, body: { value: 3 }, headers: { 'if-match': '"2"' } })).status).toBe(
      200,
    )
    expect((await t.req('DELETE', '/api/flags/m/flag', { token: writer, headers: { 'if-match': '"3"' } })).status).toBe(200)
  })

  test('8 parallel writers holding the same revision: exactly one wins', async () => {
    await create({ name: 'm/race', type: 'INTEGER' })
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        t.req('PUT', '/api/flags/m/race', { token: writer, body: { value: i + 1 }, headers: { 'if-match': '"1"' } }),
      ),
    )
    const statuses = results.map((r) => r.status).sort()
    expect(statuses).toEqual([200, 412, 412, 412, 412, 412, 412, 412])
    const final = await t.req('GET', '/api/flags/m/race', { token: reader })
    expect(final.body.revision).toBe(2)
    expect(final.body.value).toBe(results.find((r) => r.status === 200)?.body.value)
  })
})

group('regex safety', () => {
  test('a catastrophic pattern on a 50,000-character value is checked (RE2: no backtracking) and refused', async () => {
    await create({ name: 're/evil', type: 'STRING', regexPattern: '^(a+)+$', defaultValue: 'a' })
    const res = await t.req('PUT', '/api/flags/re/evil', { token: writer, body: { value: `${'a'.repeat(50_000)}b` } })
    expect(res.status).toBe(400)
    expect(res.body.error.details.field).toBe('value')
  })
})

group('permissions', () => {
  test('flag:read reads, flag:write writes', async () => {
    expect((await t.req('GET', '/api/flags', { token: writer })).status).toBe(403)
    expect((await t.req('POST', '/api/flags', { token: reader, body: { name: 'p/x', type: 'BOOLEAN' } })).status).toBe(403)
    expect((await t.req('PUT', '/api/flags/c/basic', { token: reader, body: { value: true } })).status).toBe(403)
    expect((await t.req('DELETE', '/api/flags/c/basic', { token: reader })).status).toBe(403)
    expect((await t.req('GET', '/api/flags/c/basic')).status).toBe(401)
  })
})

test('a restart keeps every flag byte for byte', async () => {
  const app = await createTestApp()
  await app.req('POST', '/api/flags', {
    token: app.adminToken,
    body: { name: 'keep/tag', type: 'TAG', enumValues: ['a', 'b', 'ü😀'], value: ['ü😀'], description: 'x"y\\z' },
  })
  await app.req('POST', '/api/flags', { token: app.adminToken, body: { name: 'keep/ab', type: 'AB-TEST', chancePercentB: 33.3 } })
  const before = (await app.req('GET', '/api/flags', { token: app.adminToken })).text
  const again = await app.restart()
  try {
    expect((await again.req('GET', '/api/flags', { token: again.adminToken })).text).toBe(before)
    expect(readStateFile(stateFilePath(again.dataDir)).flags.get('keep/tag')?.states.development?.value).toEqual(['ü😀'])
  } finally {
    await again.close()
  }
})

test('lists never serve a stale cached answer after a change', async () => {
  const app = await createTestApp()
  const names = async (q = '') =>
    (await app.req('GET', `/api/flags${q}`, { token: app.adminToken })).body.map(
      (f: { name: string; value?: number }) => `${f.name}=${f.value}`,
    )
  await app.req('POST', '/api/flags', { token: app.adminToken, body: { name: 'c/a', type: 'INTEGER', value: 1 } })
  expect(await names()).toEqual(['c/a=1'])
  await app.req('POST', '/api/flags', { token: app.adminToken, body: { name: 'c/b', type: 'INTEGER', value: 2 } })
  await app.req('PUT', '/api/flags/c/a', { token: app.adminToken, body: { value: 5 } })
  expect(await names()).toEqual(['c/a=5', 'c/b=2'])
  expect(await names('?prefix=c/b')).toEqual(['c/b=2'])
  await app.req('DELETE', '/api/flags/c/b', { token: app.adminToken })
  expect(await names()).toEqual(['c/a=5'])
  await app.close()
})
