/** docs/api.md#conventions: an unknown body field is refused naming it, with the field it probably meant. */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp()
})
afterAll(() => t.close())

test('a misspelt flag field: 400 naming it and the field it probably meant; nothing created', async () => {
  const res = await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'shop/on', type: 'BOOLEAN', vaule: true } })
  expect(res.status).toBe(400)
  expect(res.body.error.message).toBe('vaule: unknown field; did you mean "value"?')
  expect(res.body.error.details).toMatchObject({ field: 'vaule' })
  expect((await t.req('GET', '/api/flags/shop/on', { token: t.adminToken })).status).toBe(404)
})

test('a misspelt field on a schema-checked route, and a misspelt query parameter, get a suggestion too', async () => {
  const res = await t.req('POST', '/api/users', {
    token: t.adminToken,
    body: { username: 'carl', password: 'carl-password', permisions: [] },
  })
  expect(res.status).toBe(400)
  expect(res.body.error.message).toBe('unknown field "permisions"; did you mean "permissions"?')
  const query = await t.req('GET', '/api/flags?prefx=a/', { token: t.adminToken })
  expect(query.status).toBe(400)
  expect(query.body.error.message).toBe('unknown query parameter "prefx"; did you mean "prefix"?')
})

test('a field close to none is refused without a guess', async () => {
  const res = await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'shop/on', type: 'BOOLEAN', colour: 'red' } })
  expect(res.body.error.message).toBe('colour: unknown field')
})

test('a misspelt required field is named as the typo it is, not only as missing', async () => {
  const flag = await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'shop/typo', tpye: 'BOOLEAN' } })
  expect(flag.status).toBe(400)
  expect(flag.body.error.message).toBe('tpye: unknown field; did you mean "type"?')
  const user = await t.req('POST', '/api/users', { token: t.adminToken, body: { usernme: 'dora', password: 'dora-password' } })
  expect(user.status).toBe(400)
  expect(user.body.error.message).toBe('unknown field "usernme"; did you mean "username"?')
  // missing with nothing like it: plainly required
  const bare = await t.req('POST', '/api/users', { token: t.adminToken, body: { password: 'dora-password' } })
  expect(bare.body.error.message).toBe('username is required')
})
