/**
 * GO Feature Flag's later `scheduledRollout` steps over HTTP (docs/migrations.md#changes-a-later-time-brings):
 * the import's answer lists each as a scheduled change request, readable at its own route; a dry run
 * lists them without making one.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

const NOW = Date.parse('2026-12-01T09:00:00.000Z')
const yaml = `
price:
  variations: { low: 1, high: 2 }
  defaultRule: { variation: low }
  scheduledRollout:
    - date: 2026-12-24T00:00:00Z
      defaultRule: { variation: high }
`
let t: TestApp

beforeAll(async () => {
  t = await createTestApp({}, { now: () => new Date(NOW) })
})
afterAll(async () => {
  await t.close()
})

const put = (query: string) =>
  t.req('PUT', `/api/migrations?format=gofeatureflag${query}`, {
    token: t.adminToken,
    rawBody: yaml,
    headers: { 'content-type': 'application/yaml' },
  })

test('a future step is listed as a scheduled change request, made only when the import is not a dry run', async () => {
  const dry = await put('&dryRun=true')
  expect(dry.status).toBe(200)
  expect(dry.body.scheduled).toEqual([{ flag: 'price', at: '2026-12-24T00:00:00.000Z', changeRequest: null, state: 'scheduled' }])
  expect((await t.req('GET', '/api/change-requests', { token: t.adminToken })).body).toEqual([])
  const res = await put('')
  expect(res.status).toBe(200)
  expect(res.body.skipped).toEqual([])
  const [entry] = res.body.scheduled
  expect(entry).toMatchObject({ flag: 'price', at: '2026-12-24T00:00:00.000Z', state: 'scheduled' })
  const request = await t.req('GET', `/api/change-requests/${entry.changeRequest}`, { token: t.adminToken })
  expect(request.status).toBe(200)
  expect(request.body).toMatchObject({
    state: 'scheduled',
    scheduledAt: '2026-12-24T00:00:00.000Z',
    changes: [{ flag: 'price', set: { value: 2 } }],
  })
})
