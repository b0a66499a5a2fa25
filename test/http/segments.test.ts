/**
 * docs/targeting.md#rules over HTTP: segments created, read with usedBy, replaced, deleted; cycles and
 * dangling references refused; deletion refused while used; a change moves the revision, ETag and
 * OFREP events of every flag that depends on it, and is audited.
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

const put = (name: string, body: unknown, token = t.adminToken) => t.req('PUT', `/api/segments/${name}`, { token, body })
const get = (name: string) => t.req('GET', `/api/segments/${name}`, { token: t.adminToken })
const evaluate = (key: string, context: Record<string, unknown>) =>
  t.req('POST', `/ofrep/v1/evaluate/flags/${key}`, { token: t.adminToken, body: { context } })

group('segments', () => {
  test('PUT creates (201, Location) then replaces (200); GET lists them in name order with usedBy', async () => {
    const staff = { description: 'Staff', rule: { ends_with: [{ var: 'email' }, '@example.com'] } }
    const created = await put('staff', staff)
    expect(created.status).toBe(201)
    expect(created.headers.get('location')).toBe('/api/segments/staff')
    expect(created.body).toEqual({
      name: 'staff',
      ...staff,
      usedBy: [],
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
      revision: 1,
    })
    expect((await put('beta', { rule: { or: [{ $ref: 'staff' }, { in: [{ var: 'plan' }, ['beta']] }] } })).status).toBe(201)
    const flag = await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 's/new-ui', type: 'BOOLEAN', targeting: { if: [{ $ref: 'beta' }, 'true', 'false'] } },
    })
    expect(flag.status).toBe(201)
    const list = await t.req('GET', '/api/segments', { token: t.adminToken })
    expect(list.body.map((s: { name: string; usedBy: string[] }) => [s.name, s.usedBy])).toEqual([
      ['beta', ['s/new-ui']],
      ['staff', ['beta']],
    ])
    expect((await get('nope')).status).toBe(404)
  })

  test('OFREP follows the segment; changing it moves the flag revision, its ETag and the OFREP stream', async () => {
    expect((await evaluate('s/new-ui', { email: 'ann@example.com' })).body).toMatchObject({ value: true, reason: 'TARGETING_MATCH' })
    expect((await evaluate('s/new-ui', { plan: 'free' })).body).toMatchObject({ value: false })
    const before = await t.req('GET', '/api/flags/s/new-ui', { token: t.adminToken })
    const replaced = await put('staff', { description: 'Staff', rule: { ends_with: [{ var: 'email' }, '@example.org'] } })
    expect(replaced.status).toBe(200)
    expect(replaced.body.revision).toBe(2)
    const after = await t.req('GET', '/api/flags/s/new-ui', { token: t.adminToken })
    expect(after.body.revision).toBe(before.body.revision + 1)
    expect(after.headers.get('etag')).not.toBe(before.headers.get('etag'))
    expect((await evaluate('s/new-ui', { email: 'ann@example.com' })).body).toMatchObject({ value: false })
    expect((await evaluate('s/new-ui', { email: 'ann@example.org' })).body).toMatchObject({ value: true })
    // the same rule again changes nothing
    expect((await put('staff', { description: 'Staff', rule: { ends_with: [{ var: 'email' }, '@example.org'] } })).body.revision).toBe(2)
    const audit = await t.req('GET', '/api/audit?action=segment.', { token: t.adminToken })
    expect(audit.body.map((e: { action: string; target: unknown }) => [e.action, e.target])).toEqual([
      ['segment.updated', { type: 'segment', name: 'staff' }],
      ['segment.created', { type: 'segment', name: 'beta' }],
      ['segment.created', { type: 'segment', name: 'staff' }],
    ])
  })

  test('cycles, dangling references, bad names and bodies are 400 naming the place; nothing changes', async () => {
    const cycle = await put('staff', { rule: { or: [{ $ref: 'beta' }] } })
    expect(cycle.status).toBe(400)
    expect(cycle.body.error.details.errors[0]).toMatchObject({
      field: 'rule.or[0].$ref',
      reason: expect.stringContaining('cycle: staff → beta → staff'),
    })
    expect((await put('self', { rule: { $ref: 'self' } })).body.error.details.errors[0].reason).toContain('cycle')
    expect((await put('x', { rule: { $ref: 'ghost' } })).body.error.details.errors[0]).toEqual({
      field: 'rule.$ref',
      reason: 'segment ghost does not exist',
    })
    expect((await put('bad%20name', { rule: { '==': [1, 1] } })).body.error.details.errors[0].field).toBe('name')
    expect((await put('y', { rule: { regex: [] } })).body.error.details.errors[0].reason).toContain('unknown operator')
    expect((await put('z', { rule: { '==': [1, 1] }, colour: 'red' })).body.error.details.errors[0]).toEqual({
      field: 'colour',
      reason: 'unknown field',
    })
    expect((await put('z', {})).body.error.details.errors[0]).toEqual({ field: 'rule', reason: 'required' })
    expect((await get('staff')).body.rule).toEqual({ ends_with: [{ var: 'email' }, '@example.org'] })
    expect((await get('x')).status).toBe(404)
  })

  test('deleting a used segment is 409 naming its users; unused, it goes', async () => {
    const refused = await t.req('DELETE', '/api/segments/staff', { token: t.adminToken })
    expect(refused.status).toBe(409)
    expect(refused.body.error.message).toContain('segment beta')
    const refused2 = await t.req('DELETE', '/api/segments/beta', { token: t.adminToken })
    expect(refused2.body.error.message).toContain('flag s/new-ui')
    await t.req('PUT', '/api/flags/s/new-ui', { token: t.adminToken, body: { targeting: null } })
    expect((await t.req('DELETE', '/api/segments/beta', { token: t.adminToken })).body).toEqual({ deleted: true, name: 'beta' })
    expect((await t.req('DELETE', '/api/segments/staff', { token: t.adminToken })).status).toBe(200)
    expect((await t.req('GET', '/api/segments', { token: t.adminToken })).body).toEqual([])
  })

  test('permissions: flag:read to read; flag:write and no flagPrefixes to change', async () => {
    const reader = (await t.userWith(['flag:read'])).token
    expect((await t.req('GET', '/api/segments', { token: reader })).status).toBe(200)
    expect((await put('r', { rule: { '==': [1, 1] } }, reader)).status).toBe(403)
    const confined = (
      await t.req('POST', '/api/tokens', {
        token: t.adminToken,
        body: { name: 'conf', permissions: ['flag:write', 'flag:read'], flagPrefixes: ['s/'] },
      })
    ).body.token
    const res = await put('r', { rule: { '==': [1, 1] } }, confined)
    expect(res.status).toBe(403)
    // the message speaks of segments, not of migrations
    expect(res.body.error.message).toContain('a segment can change the answers of any flag')
    expect(res.body.error.message).not.toContain('migration')
    const del = await t.req('DELETE', '/api/segments/r', { token: confined })
    expect([del.status, del.body.error.message.includes('segment')]).toEqual([403, true])
  })

  test('usedBy shows a confined token only the flags inside its prefixes', async () => {
    expect((await put('shared', { rule: { '==': [{ var: 'x' }, 1] } })).status).toBe(201)
    for (const name of ['s/inside', 'other/outside'])
      expect(
        (
          await t.req('POST', '/api/flags', {
            token: t.adminToken,
            body: { name, type: 'BOOLEAN', targeting: { if: [{ $ref: 'shared' }, 'true'] } },
          })
        ).status,
      ).toBe(201)
    const confined = (
      await t.req('POST', '/api/tokens', {
        token: t.adminToken,
        body: { name: 'reader-s', permissions: ['flag:read'], flagPrefixes: ['s/'] },
      })
    ).body.token
    const list = await t.req('GET', '/api/segments', { token: confined })
    expect(list.body.find((s: { name: string }) => s.name === 'shared').usedBy).toEqual(['s/inside'])
    expect((await get('shared')).body.usedBy).toEqual(['other/outside', 's/inside'])
    expect((await t.req('GET', '/api/segments/shared', { token: confined })).body.usedBy).toEqual(['s/inside'])
    expect((await t.req('GET', '/api/flags/other/outside', { token: confined })).status).toBe(404)
  })

  test('30 concurrent PUTs of new segments: every 201 is listed once, a second PUT replaces (200), and all survive a restart', async () => {
    const names = Array.from({ length: 30 }, (_, i) => `cc${i}`)
    const answers = await Promise.all(names.map((n) => put(n, { rule: { '==': [{ var: 'n' }, n] } })))
    expect(answers.map((a) => a.status)).toEqual(Array(30).fill(201))
    const listed = async () =>
      ((await t.req('GET', '/api/segments', { token: t.adminToken })).body as { name: string }[])
        .map((s) => s.name)
        .filter((n) => /^cc\d+$/.test(n))
    expect((await listed()).sort()).toEqual([...names].sort())
    for (const n of names) expect((await get(n)).status).toBe(200)
    const again = await put('cc3', { description: 'second', rule: { '==': [{ var: 'n' }, 'cc3'] } })
    expect([again.status, again.body.revision]).toEqual([200, 2])
    t = await t.restart()
    expect((await listed()).sort()).toEqual([...names].sort())
    expect((await t.req('DELETE', '/api/segments/cc3', { token: t.adminToken })).status).toBe(200)
    t = await t.restart()
    expect((await get('cc3')).status).toBe(404)
    // an import that adds a segment and a flag using it now applies as its dry run said
    const doc = {
      environment: 'x',
      version: '1.0.0',
      createdAt: '2026-11-27T00:00:00.000Z',
      segments: { ys1: { rule: { '==': [1, 1] } } },
      flags: { 'imp/uses-ys1': { type: 'BOOLEAN', defaultValue: false, targeting: { if: [{ $ref: 'ys1' }, 'true'] } } },
    }
    const dry = await t.req('PUT', '/api/migrations?dryRun=true', { token: t.adminToken, body: doc })
    expect(dry.status).toBe(200)
    const applied = await t.req('PUT', '/api/migrations', { token: t.adminToken, body: doc })
    expect(applied.status).toBe(200)
    expect((await get('ys1')).status).toBe(200)
  })

  test('an import with mode=replace deletes the segments the file does not name, however they were written', async () => {
    // written concurrently, as the 30 above: the writes that once vanished from the name index
    const names = Array.from({ length: 10 }, (_, i) => `rp${i}`)
    await Promise.all(names.map((n) => put(n, { rule: { '==': [{ var: 'n' }, n] } })))
    const all = ((await t.req('GET', '/api/segments', { token: t.adminToken })).body as { name: string; usedBy: string[] }[]).filter(
      (s) => s.usedBy.length === 0,
    )
    const keep = { rp3: { description: '', rule: { '==': [{ var: 'n' }, 'rp3'] } } }
    const users = ((await t.req('GET', '/api/segments', { token: t.adminToken })).body as { name: string; rule: unknown }[]).filter(
      (s) => !all.some((a) => a.name === s.name),
    )
    const segments = { ...keep, ...Object.fromEntries(users.map((s) => [s.name, { description: '', rule: s.rule }])) }
    const exported = await t.req('GET', '/api/migrations/export', { token: t.adminToken })
    const doc = { ...exported.body, segments }
    const dry = await t.req('PUT', '/api/migrations?mode=replace&dryRun=true', { token: t.adminToken, body: doc })
    expect(dry.status).toBe(200)
    const deleted = (dry.body.segmentChanges as { name: string; action: string }[]).filter((c) => c.action === 'delete').map((c) => c.name)
    expect(deleted).toEqual(expect.arrayContaining(names.filter((n) => n !== 'rp3')))
    const applied = await t.req('PUT', '/api/migrations?mode=replace', { token: t.adminToken, body: doc })
    expect(applied.status).toBe(200)
    const left = ((await t.req('GET', '/api/segments', { token: t.adminToken })).body as { name: string }[]).map((s) => s.name)
    expect(left.filter((n) => n.startsWith('rp'))).toEqual(['rp3'])
    expect(left.sort()).toEqual(Object.keys(segments).sort())
  })
})
