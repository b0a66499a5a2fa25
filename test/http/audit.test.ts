/** docs/api.md#audit-log over HTTP: what the audit log records, how it is read, and rollbacks. */

import { expect, test } from 'bun:test'
import { createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
const group = scenarioGroup(
  async () => {
    t = await createTestApp()
  },
  () => t.close(),
)

const audit = async (query = '', token = t.adminToken) => t.req('GET', `/api/audit${query}`, { token })
const flagPut = (name: string, body: unknown, headers: Record<string, string> = {}) =>
  t.req('PUT', `/api/flags/${name}`, { token: t.adminToken, body, headers })

group('what is recorded', () => {
  test('flags: created, updated, renamed, deleted, with whole resources, actor, source and request id', async () => {
    await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'a/one', type: 'INTEGER', value: 1 },
      headers: { 'x-request-id': 'req-create' },
    })
    await flagPut('a/one', { value: 2 })
    await flagPut('a/one', { name: 'a/two' })
    await t.req('DELETE', '/api/flags/a/two', { token: t.adminToken })
    const res = await audit('?action=flag.')
    expect(res.status).toBe(200)
    const [deleted, renamed, updated, created] = res.body
    expect(created).toMatchObject({
      action: 'flag.created',
      source: 'api',
      requestId: 'req-create',
      target: { type: 'flag', name: 'a/one' },
      revision: 1,
      before: null,
    })
    expect(created.actor).toEqual({ type: 'user', id: expect.any(String), name: 'admin' })
    expect(created.after).toMatchObject({ name: 'a/one', type: 'INTEGER', value: 1, revision: 1 })
    expect(created.after.id).toBeUndefined() // the internal id is never shown
    expect(updated).toMatchObject({ action: 'flag.updated', revision: 2, before: { value: 1 }, after: { value: 2 } })
    expect(renamed).toMatchObject({
      action: 'flag.updated',
      target: { name: 'a/two' },
      before: { name: 'a/one' },
      after: { name: 'a/two' },
    })
    expect(deleted).toMatchObject({ action: 'flag.deleted', target: { name: 'a/two' }, revision: 3, after: null })
    expect(deleted.id).toBeGreaterThan(renamed.id)
    expect(Date.parse(created.at)).toBeGreaterThan(0)
  })

  test('users and tokens never carry a password, hash or secret; a password change says so', async () => {
    const u = await t.userWith(['flag:read'], 'audited')
    await t.req('PUT', `/api/users/${u.id}`, { token: t.adminToken, body: { password: 'another-password-1' } })
    const made = (await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'audited token', permissions: [] } })).body
    await t.req('DELETE', `/api/tokens/${made.id}`, { token: t.adminToken })
    const res = await audit('?limit=1000')
    expect(res.text).not.toContain('argon2')
    expect(res.text).not.toContain('passwordHash')
    expect(res.text).not.toContain('another-password-1')
    expect(res.text).not.toContain(made.token.slice(4))
    expect(res.text).not.toContain('secretHash')
    const userEntries = res.body.filter((e: { target: { id?: string } }) => e.target.id === u.id)
    expect(userEntries.map((e: { action: string }) => e.action)).toEqual(['user.updated', 'user.created'])
    expect(userEntries[0].after.passwordChanged).toBe(true)
    expect(userEntries[0].target).toEqual({ type: 'user', id: u.id, name: 'audited' })
    const tokenEntries = res.body.filter((e: { target: { id?: string } }) => e.target.id === made.id)
    expect(tokenEntries.map((e: { action: string }) => e.action)).toEqual(['token.deleted', 'token.created'])
    expect(tokenEntries[1].after).toMatchObject({ name: 'audited token', permissions: [] })
  })

  test('a session ended by someone else is recorded; logins and logouts are not', async () => {
    const u = await t.userWith([], 'session-owner')
    const before = (await audit('?action=session.')).body.length
    await t.req('POST', '/api/logout', { token: u.token })
    const other = await t.login('session-owner', 'session-owner-password')
    const sid = JSON.parse(Buffer.from(other.split('.')[1] as string, 'base64url').toString()).sid
    await t.req('DELETE', `/api/sessions/${sid}`, { token: t.adminToken })
    const sessions = (await audit('?action=session.')).body
    expect(sessions.length).toBe(before + 1)
    expect(sessions[0]).toMatchObject({ action: 'session.deleted', target: { type: 'session', id: sid }, after: null })
    expect((await audit('?action=session.created')).body).toEqual([])
  })

  test('a change the web UI sends (X-Flagd-Client: ui) is audited as source ui; the same without it as api', async () => {
    const make = (name: string, headers: Record<string, string>) =>
      t.req('POST', '/api/flags', { token: t.adminToken, body: { name, type: 'BOOLEAN' }, headers })
    expect((await make('src/from-ui', { 'x-flagd-client': 'ui' })).status).toBe(201)
    expect((await make('src/from-api', {})).status).toBe(201)
    const entries = (await audit('?action=flag.created&limit=2')).body as { target: { name: string }; source: string }[]
    expect(entries.map((e) => [e.target.name, e.source])).toEqual([
      ['src/from-api', 'api'],
      ['src/from-ui', 'ui'],
    ])
  })

  test('an import records one entry per changed flag, all with the same request id and source', async () => {
    const doc = {
      environment: 'x',
      version: '1.0.0',
      createdAt: new Date().toISOString(),
      flags: { 'imp/a': { type: 'BOOLEAN' }, 'imp/b': { type: 'BOOLEAN' } },
    }
    await t.req('PUT', '/api/migrations', { token: t.adminToken, body: doc, headers: { 'x-request-id': 'import-42' } })
    const entries = (await audit('?action=flag.created&limit=2')).body
    expect(entries.map((e: { target: { name: string } }) => e.target.name).sort()).toEqual(['imp/a', 'imp/b'])
    expect(entries.every((e: { requestId: string; source: string }) => e.requestId === 'import-42' && e.source === 'import-upload')).toBe(
      true,
    )
  })
})

group('reading', () => {
  test('flag= follows a flag back through its renames; a gone name gives the entries that named it', async () => {
    await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'h/old', type: 'BOOLEAN' } })
    await flagPut('h/old', { name: 'h/new' })
    await flagPut('h/new', { value: true })
    const history = (await audit('?flag=h/new')).body
    expect(history.map((e: { action: string; target: { name: string } }) => `${e.action} ${e.target.name}`)).toEqual([
      'flag.updated h/new',
      'flag.updated h/new',
      'flag.created h/old',
    ])
    const byOld = (await audit('?flag=h/old')).body
    expect(byOld.map((e: { action: string }) => e.action)).toEqual(['flag.updated', 'flag.created'])
  })

  test('filters, newest first, and Link pagination', async () => {
    for (let i = 0; i < 5; i++) await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: `p/f${i}`, type: 'BOOLEAN' } })
    const first = await audit('?action=flag.created&limit=2')
    expect(first.body).toHaveLength(2)
    const link = first.headers.get('link') as string
    expect(link).toMatch(/^<\/api\/audit\?.*before=\d+.*>; rel="next"$/)
    const next = await audit(link.slice(link.indexOf('?'), link.indexOf('>')))
    expect(next.body).toHaveLength(2)
    expect(next.body[0].id).toBeLessThan(first.body[1].id)
    const me = (await t.req('GET', '/api/me', { token: t.adminToken })).body.id
    expect((await audit(`?actor=${me}&limit=1000`)).body.every((e: { actor: { id: string } }) => e.actor.id === me)).toBe(true)
    // a username (or a token's name) does as well as the id
    const byName = (await audit('?actor=admin&limit=1000')).body
    expect(byName.length).toBeGreaterThan(0)
    expect(byName).toEqual((await audit(`?actor=${me}&limit=1000`)).body)
    // a typed query parameter says what it must be
    const bad = await audit('?limit=abc')
    expect(bad.status).toBe(400)
    expect(bad.body.error.details).toEqual({ field: 'limit', reason: 'must be an integer' })
    const bot = (await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'audit bot', permissions: ['flag:write'] } })).body
    await t.req('POST', '/api/flags', { headers: { 'x-api-key': bot.token }, body: { name: 'h/by_bot', type: 'BOOLEAN' } })
    const byTokenName = (await audit(`?actor=${encodeURIComponent('audit bot')}`)).body
    expect(byTokenName.map((e: { target: { name: string } }) => e.target.name)).toEqual(['h/by_bot'])
    expect(byTokenName).toEqual((await audit(`?actor=${bot.id}`)).body)
    const future = new Date(Date.now() + 60_000).toISOString()
    expect((await audit(`?since=${future}`)).body).toEqual([])
    expect((await audit(`?until=2000-01-01`)).body).toEqual([])
    expect((await audit('?limit=1000')).headers.get('link')).toBeNull()
  })

  test('bad filters are 400 naming the parameter; entries cannot be changed', async () => {
    for (const [query, field] of [
      ['?limit=0', 'limit'],
      ['?limit=1001', 'limit'],
      ['?before=x', 'before'],
      ['?since=yesterday', 'since'],
      ['?nope=1', 'nope'],
    ]) {
      const res = await audit(query as string)
      expect(res.status, query).toBe(400)
      expect(res.body.error.details.field).toBe(field)
    }
    expect((await t.req('DELETE', '/api/audit', { token: t.adminToken })).status).toBe(405)
    expect((await t.req('PUT', '/api/audit', { token: t.adminToken, body: {} })).status).toBe(405)
  })

  test('audit:read for the whole log; flag:read is enough for one flag; a scoped token needs the filter', async () => {
    const reader = await t.userWith(['flag:read'])
    expect((await audit('', reader.token)).status).toBe(403)
    expect((await audit('?flag=h/new', reader.token)).status).toBe(200)
    const auditor = await t.userWith(['audit:read'])
    expect((await audit('', auditor.token)).status).toBe(200)
    const scoped = (
      await t.req('POST', '/api/tokens', {
        token: t.adminToken,
        body: { name: 'scoped auditor', permissions: ['audit:read', 'flag:read'], flagPrefixes: ['h/'] },
      })
    ).body.token
    expect((await audit('', scoped)).status).toBe(403)
    expect((await audit('?flag=h/new', scoped)).body.length).toBeGreaterThan(0)
    expect((await audit('?flag=p/f1', scoped)).body).toEqual([])
  })

  test('a confined token asking for the old name of a flag renamed out of its prefixes learns nothing of where it went', async () => {
    await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'mobile/moved', type: 'STRING', value: 'inside' } })
    await t.req('PUT', '/api/flags/mobile/moved', { token: t.adminToken, body: { name: 'desk/moved', value: 'outside-secret' } })
    const confined = (
      await t.req('POST', '/api/tokens', {
        token: t.adminToken,
        body: { name: 'mobile auditor', permissions: ['flag:read'], flagPrefixes: ['mobile/'] },
      })
    ).body.token
    const seen = await audit('?flag=mobile/moved', confined)
    expect(seen.status).toBe(200)
    expect(seen.text).not.toContain('desk/moved')
    expect(seen.text).not.toContain('outside-secret')
    expect(seen.body.map((e: { action: string }) => e.action)).toEqual(['flag.created'])
  })
})

group('rollback', () => {
  test('restores an earlier revision as a new one, recorded with source rollback', async () => {
    await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'r/limit', type: 'INTEGER', value: 5, maxValue: 10, description: 'good' },
    })
    await flagPut('r/limit', { value: 9, description: 'bad', maxValue: null })
    const res = await t.req('POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'r/limit', revision: 1 } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ name: 'r/limit', value: 5, maxValue: 10, description: 'good', revision: 3 })
    expect(res.headers.get('etag')).toBe('"3"')
    const [entry] = (await audit('?flag=r/limit&limit=1')).body
    expect(entry).toMatchObject({ source: 'rollback', action: 'flag.updated', revision: 3 })
  })

  test('restores variants, the rule, enabled and metadata, and removes what the revision did not have', async () => {
    const rule = { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'high'] }
    await t.req('POST', '/api/flags', {
      token: t.adminToken,
      body: { name: 'r/rules', type: 'INTEGER', value: 1, variants: { high: 9 }, targeting: rule, metadata: { owner: 'a' } },
    })
    await flagPut('r/rules', { enabled: false, targeting: null, variants: { low: 0 }, metadata: null })
    const res = await t.req('POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'r/rules', revision: 1 } })
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ enabled: true, variants: { high: 9 }, targeting: rule, metadata: { owner: 'a' }, revision: 3 })
    const back = await t.req('POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'r/rules', revision: 2 } })
    expect(back.body).toMatchObject({ enabled: false, variants: { low: 0 } })
    expect(back.body.targeting).toBeUndefined()
    expect(back.body.metadata).toBeUndefined()
  })

  test('keeps the current name, restores a type change, honours If-Match', async () => {
    await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'r/kind', type: 'STRING', value: 'x' } })
    await flagPut('r/kind', { type: 'BOOLEAN', value: true, name: 'r/kind2' })
    expect(
      (
        await t.req('POST', '/api/rollbacks', {
          token: t.adminToken,
          body: { name: 'r/kind2', revision: 1 },
          headers: { 'if-match': '"1"' },
        })
      ).status,
    ).toBe(412)
    const res = await t.req('POST', '/api/rollbacks', {
      token: t.adminToken,
      body: { name: 'r/kind2', revision: 1 },
      headers: { 'if-match': '"2"' },
    })
    expect(res.body).toMatchObject({ name: 'r/kind2', type: 'STRING', value: 'x', revision: 3 })
  })

  test('404 for an unknown flag or revision, 400 for a bad body, 403 without flag:write', async () => {
    expect((await t.req('POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'r/none', revision: 1 } })).status).toBe(404)
    expect((await t.req('POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'r/limit', revision: 99 } })).status).toBe(404)
    expect((await t.req('POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'r/limit', revision: 0 } })).status).toBe(400)
    expect((await t.req('POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'r/limit' } })).status).toBe(400)
    expect((await t.req('POST', '/api/rollbacks', { token: t.adminToken, body: { name: 'r/limit', revision: 1, extra: 1 } })).status).toBe(
      400,
    )
    const reader = await t.userWith(['flag:read'])
    expect((await t.req('POST', '/api/rollbacks', { token: reader.token, body: { name: 'r/limit', revision: 1 } })).status).toBe(403)
  })
})

group('large entries', () => {
  test('a page of large entries stops at the page budget, with a next link, and the pages together hold every entry', async () => {
    await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'big/text', type: 'STRING' } })
    // 40 changes of a 65,536-character value: about 130 KB an entry (before and after), 5 MB in all
    for (let i = 0; i < 40; i++)
      expect(
        (await t.req('PUT', '/api/flags/big/text', { token: t.adminToken, body: { value: String(i % 10).repeat(65_536) } })).status,
      ).toBe(200)
    const ids: number[] = []
    let url = '/api/audit?flag=big/text&limit=100'
    let pages = 0
    for (;;) {
      const res = await audit(url.slice('/api/audit'.length))
      expect(res.status).toBe(200)
      expect(res.text.length).toBeLessThan(4.5 * 1024 * 1024) // about the budget, never the whole history
      ids.push(...res.body.map((e: { id: number }) => e.id))
      pages++
      const next = /<([^>]+)>; rel="next"/.exec(res.headers.get('link') ?? '')
      if (!next) break
      url = next[1] as string
    }
    expect(pages).toBeGreaterThan(1)
    expect(ids).toHaveLength(41) // created + forty updates
    expect(ids).toEqual([...ids].sort((a, b) => b - a))
  })
})
