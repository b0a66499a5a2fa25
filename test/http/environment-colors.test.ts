/**
 * Environment colours over HTTP (docs/api.md#environment-colours): `color` on `PUT
 * /api/environments/{name}`, a 400 naming `color` for anything but a CSS colour, reads with the
 * effective colour, and a change audited like other environment changes.
 */

import { afterEach, expect, test } from 'bun:test'
import { defaultColor } from '../../src/domain/environment-color.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

async function app(): Promise<TestApp> {
  const a = await createTestApp({ FLAGD_ENVIRONMENT: 'development' })
  apps.push(a)
  return a
}

test('a colour is set, read back, audited, and reset by null', async () => {
  const a = await app()
  const put = (body: unknown) => a.req('PUT', '/api/environments/staging', { token: a.adminToken, body })
  expect((await put({})).body.color).toBe(defaultColor('staging'))
  const set = await put({ color: '#0f766e' })
  expect(set.status).toBe(200)
  expect(set.body.color).toBe('#0f766e')
  const listed = await a.req('GET', '/api/environments', { token: a.adminToken })
  expect(listed.body.map((e: { name: string; color: string }) => [e.name, e.color])).toEqual([
    ['development', defaultColor('development')],
    ['staging', '#0f766e'],
  ])
  const [entry] = (await a.req('GET', '/api/audit?limit=1', { token: a.adminToken })).body
  expect(entry).toMatchObject({ action: 'environment.updated', target: { name: 'staging' }, after: { color: '#0f766e' } })
  expect((await put({ color: null })).body.color).toBe(defaultColor('staging'))
})

test('anything but a CSS colour is a 400 naming color, and changes nothing', async () => {
  const a = await app()
  const put = (body: unknown) => a.req('PUT', '/api/environments/staging', { token: a.adminToken, body })
  expect((await put({ color: 'teal' })).status).toBe(201)
  for (const color of ['#12', 'blurple', 'rgb(1,2)', 'x'.repeat(200), 5, false, ['red']]) {
    const res = await put({ color, description: 'changed' })
    expect([color, res.status]).toEqual([color, 400])
    expect(JSON.stringify(res.body)).toContain('color')
  }
  const made = await a.req('PUT', '/api/environments/qa', { token: a.adminToken, body: { color: 'not-a-colour' } })
  expect(made.status).toBe(400)
  const listed = await a.req('GET', '/api/environments', { token: a.adminToken })
  expect(listed.body.map((e: { name: string; color: string; description: string }) => [e.name, e.description, e.color])).toEqual([
    ['development', '', defaultColor('development')],
    ['staging', '', 'teal'],
  ])
})
