/**
 * The one clock (docs/development.md#time), end to end: an app whose clock is pinned far from today
 * signs in, writes and stamps its audit entries at the pinned moment, whatever today's date is. A
 * session checked against the real date instead of the pinned one expired here (it did in every
 * test pinned to a day that today had left behind).
 */

import { afterEach, describe, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

const apps: TestApp[] = []
afterEach(async () => {
  for (const t of apps.splice(0)) await t.close()
})

// one moment long before any run of this suite, one long after it
for (const at of ['2001-02-03T04:05:06.000Z', '2099-02-03T04:05:06.000Z']) {
  describe(`with the clock at ${at}`, () => {
    test('a session signed in works, writes succeed, and the audit says when by that clock', async () => {
      const t = await createTestApp({}, { now: () => new Date(at) })
      apps.push(t)
      const created = await t.req('POST', '/api/flags', {
        token: t.adminToken,
        body: { name: 'app/f', type: 'BOOLEAN', defaultValue: false },
      })
      expect(created.status).toBe(201)
      expect(created.body.createdAt).toBe(at)
      const me = await t.req('GET', '/api/me', { token: t.adminToken })
      expect(me.status).toBe(200)
      const audit = await t.req('GET', '/api/audit?limit=1', { token: t.adminToken })
      expect(audit.status).toBe(200)
      expect(audit.body[0].at).toBe(at)
    })
  })
}
