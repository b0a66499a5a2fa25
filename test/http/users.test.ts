/** docs/api.md#permissions–4: the user endpoints, their rules and the revocation they cause. */

import { expect, test } from 'bun:test'
import { PERMISSIONS } from '../../src/domain/permission.ts'
import { createTestApp, scenarioGroup, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
const group = scenarioGroup(
  async () => {
    t = await createTestApp()
  },
  () => t.close(),
)

const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

group('create', () => {
  test('201 with Location and the user, without password or hash', async () => {
    const res = await t.req('POST', '/api/users', {
      token: t.adminToken,
      body: { username: 'carol', password: 'carol-password', permissions: ['user:read', 'flag:read'] },
    })
    expect(res.status).toBe(201)
    expect(res.headers.get('location')).toBe(`/api/users/${res.body.id}`)
    expect(Object.keys(res.body).sort()).toEqual(['createdAt', 'flagPrefixes', 'id', 'permissions', 'source', 'updatedAt', 'username'])
    expect(res.body.permissions).toEqual(['flag:read', 'user:read'])
    expect(res.body.createdAt).toMatch(ISO)
    expect(res.body.id).toMatch(/^[A-Za-z0-9_-]+$/)
    const got = await t.req('GET', res.headers.get('location') as string, { token: t.adminToken })
    expect(got.body).toEqual(res.body)
  })

  test('permissions default to none', async () => {
    const res = await t.req('POST', '/api/users', { token: t.adminToken, body: { username: 'noperm', password: 'noperm-password' } })
    expect(res.status).toBe(201)
    expect(res.body.permissions).toEqual([])
  })

  const invalid: [string, object, string][] = [
    ['empty username', { username: '', password: 'password1' }, 'username'],
    ['username with a space', { username: 'a b', password: 'password1' }, 'username'],
    ['username of 65 characters', { username: 'a'.repeat(65), password: 'password1' }, 'username'],
    ['password of 7 characters', { username: 'shortpw', password: '1234567' }, 'password'],
    ['password of 1025 characters', { username: 'longpw', password: 'p'.repeat(1025) }, 'password'],
    ['unknown permission', { username: 'badperm', password: 'password1', permissions: ['flag:admin'] }, 'permissions'],
    ['permissions not an array', { username: 'badperm2', password: 'password1', permissions: 'flag:read' }, 'permissions'],
    ['missing password', { username: 'nopw' }, 'password'],
    ['missing username', { password: 'password1' }, 'username'],
  ]
  test.each(invalid)('%s → 400', async (_name, body, field) => {
    const before = (await t.req('GET', '/api/users', { token: t.adminToken })).body.length
    const res = await t.req('POST', '/api/users', { token: t.adminToken, body })
    expect(res.status).toBe(400)
    expect(res.body.error.details.field).toBe(field)
    expect((await t.req('GET', '/api/users', { token: t.adminToken })).body.length).toBe(before)
  })

  test('boundaries pass: 64-character username, 8 and 1024-character passwords (code points)', async () => {
    for (const [username, password] of [
      ['b'.repeat(64), '12345678'],
      ['emoji.pw', '😀'.repeat(8)],
      ['long.pw', 'p'.repeat(1024)],
      ['x.y_z@e-x', 'password'],
    ] as const) {
      const res = await t.req('POST', '/api/users', { token: t.adminToken, body: { username, password } })
      expect(res.status).toBe(201)
    }
  })

  test('a taken username (ignoring case) is 409', async () => {
    await t.req('POST', '/api/users', { token: t.adminToken, body: { username: 'Dave', password: 'dave-password' } })
    const res = await t.req('POST', '/api/users', { token: t.adminToken, body: { username: 'dAVE', password: 'dave-password' } })
    expect(res.status).toBe(409)
    expect(res.body.error.code).toBe('CONFLICT')
  })
})

group('list and get', () => {
  test('sorted by lower-cased username, ties by exact name', async () => {
    for (const username of ['zed', 'Amy', 'bob.b', 'amy_']) {
      await t.req('POST', '/api/users', { token: t.adminToken, body: { username, password: 'password1' } })
    }
    const res = await t.req('GET', '/api/users', { token: t.adminToken })
    const names: string[] = res.body.map((u: { username: string }) => u.username)
    const expected = [...names].sort((a, b) => {
      const [x, y] = [a.toLowerCase(), b.toLowerCase()]
      return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0
    })
    expect(names).toEqual(expected)
    expect(JSON.stringify(res.body)).not.toContain('argon2')
  })

  test('unknown id is 404; odd ids are 404 too', async () => {
    for (const id of ['usr_nope', '__proto__', 'constructor', '%20']) {
      const res = await t.req('GET', `/api/users/${id}`, { token: t.adminToken })
      expect(res.status).toBe(404)
      expect(res.body.error.code).toBe('NOT_FOUND')
    }
  })
})

group('update', () => {
  test('changes username and permissions; the new permissions apply on the next request', async () => {
    const u = await t.userWith(['user:read'])
    expect((await t.req('GET', '/api/users', { token: u.token })).status).toBe(200)
    const res = await t.req('PUT', `/api/users/${u.id}`, {
      token: t.adminToken,
      body: { username: `${u.username}-renamed`, permissions: ['flag:read'] },
    })
    expect(res.status).toBe(200)
    expect(res.body.username).toBe(`${u.username}-renamed`)
    expect(res.body.permissions).toEqual(['flag:read'])
    const denied = await t.req('GET', '/api/users', { token: u.token })
    expect(denied.status).toBe(403)
    expect(denied.body.error.details.required).toBe('user:read')
  })

  test('a taken username is 409, an unknown user 404', async () => {
    const u = await t.userWith([])
    expect((await t.req('PUT', `/api/users/${u.id}`, { token: t.adminToken, body: { username: 'ADMIN' } })).status).toBe(409)
    expect((await t.req('PUT', '/api/users/usr_nope', { token: t.adminToken, body: { username: 'x1234' } })).status).toBe(404)
  })

  test('a PUT that changes nothing answers 200 with the user as it is, and writes nothing', async () => {
    const u = await t.userWith(['flag:read'])
    const before = (await t.req('GET', `/api/users/${u.id}`, { token: t.adminToken })).body
    const commits = t.app.store.writes
    for (const body of [{}, { username: u.username }, { permissions: ['flag:read'] }]) {
      const res = await t.req('PUT', `/api/users/${u.id}`, { token: t.adminToken, body })
      expect(res.status).toBe(200)
      expect(res.body).toEqual(before)
    }
    expect(t.app.store.writes).toBe(commits)
  })

  test('own password change without user:write needs the current password', async () => {
    const u = await t.userWith([])
    const other = await t.login(u.username, u.password)
    const missing = await t.req('PUT', `/api/users/${u.id}`, { token: u.token, body: { password: 'new-password-1' } })
    expect(missing.status).toBe(400)
    expect(missing.body.error.details.field).toBe('currentPassword')
    const wrong = await t.req('PUT', `/api/users/${u.id}`, {
      token: u.token,
      body: { password: 'new-password-1', currentPassword: 'nope-nope' },
    })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error.details.field).toBe('currentPassword')
    const ok = await t.req('PUT', `/api/users/${u.id}`, {
      token: u.token,
      body: { password: 'new-password-1', currentPassword: u.password },
    })
    expect(ok.status).toBe(200)
    expect((await t.req('GET', '/api/me', { token: u.token })).status).toBe(200)
    expect((await t.req('GET', '/api/me', { token: other })).status).toBe(401)
    expect((await t.req('POST', '/api/login', { body: { username: u.username, password: 'new-password-1' } })).status).toBe(200)
  })

  test('without user:write nothing else about oneself may change', async () => {
    const u = await t.userWith(['user:read'])
    for (const body of [
      { permissions: [...PERMISSIONS] },
      { username: 'sneaky' },
      { username: 'sneaky', password: 'x12345678', currentPassword: u.password },
    ]) {
      const res = await t.req('PUT', `/api/users/${u.id}`, { token: u.token, body })
      expect(res.status).toBe(403)
      expect(res.body.error.details.required).toBe('user:write')
    }
    const other = await t.userWith([])
    expect((await t.req('PUT', `/api/users/${other.id}`, { token: u.token, body: { password: 'x12345678' } })).status).toBe(403)
  })

  test('a password change by someone else ends all of that user sessions', async () => {
    const u = await t.userWith([])
    const second = await t.login(u.username, u.password)
    const res = await t.req('PUT', `/api/users/${u.id}`, { token: t.adminToken, body: { password: 'reset-password' } })
    expect(res.status).toBe(200)
    expect((await t.req('GET', '/api/me', { token: u.token })).status).toBe(401)
    expect((await t.req('GET', '/api/me', { token: second })).status).toBe(401)
  })
})

group('delete and the last administrator', () => {
  test('deleting a user ends its sessions', async () => {
    const u = await t.userWith(['flag:read'])
    const res = await t.req('DELETE', `/api/users/${u.id}`, { token: t.adminToken })
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ deleted: true, id: u.id })
    expect((await t.req('GET', '/api/me', { token: u.token })).status).toBe(401)
    expect((await t.req('GET', `/api/users/${u.id}`, { token: t.adminToken })).status).toBe(404)
    expect((await t.req('DELETE', `/api/users/${u.id}`, { token: t.adminToken })).status).toBe(404)
  })

  test('deleting oneself is 409', async () => {
    const me = (await t.req('GET', '/api/me', { token: t.adminToken })).body
    const res = await t.req('DELETE', `/api/users/${me.id}`, { token: t.adminToken })
    expect(res.status).toBe(409)
  })

  test('the last user:write holder cannot be demoted or deleted', async () => {
    const app = await createTestApp()
    const me = (await app.req('GET', '/api/me', { token: app.adminToken })).body
    const demote = await app.req('PUT', `/api/users/${me.id}`, { token: app.adminToken, body: { permissions: ['user:read'] } })
    expect(demote.status).toBe(409)
    const second = await app.userWith(['user:write'])
    const deleteFirst = await app.req('DELETE', `/api/users/${me.id}`, { token: second.token })
    expect(deleteFirst.status).toBe(200)
    const demoteLast = await app.req('PUT', `/api/users/${second.id}`, { token: second.token, body: { permissions: [] } })
    expect(demoteLast.status).toBe(409)
    const keepsOthers = await app.req('PUT', `/api/users/${second.id}`, {
      token: second.token,
      body: { permissions: ['user:write', 'flag:read'] },
    })
    expect(keepsOthers.status).toBe(200)
    await app.close()
  })
})
