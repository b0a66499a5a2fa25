/**
 * `GET /api/flags/{name}/impact` refusals (docs/api.md#impact): a query without a metric, or naming one
 * no guard reads, says which metrics the flag's guard does read, so the next try can be right.
 */

import { expect, test } from 'bun:test'
import { setGuardedRollout } from '../helpers/guarded-flag.ts'
import { failureOf, tempServices } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()

async function world() {
  const w = await worlds.open()
  await w.s.flags.create(SYSTEM, { name: 'shop/checkout', type: 'BOOLEAN', value: false })
  await setGuardedRollout(w.store, 'shop/checkout', 'development')
  return w
}

test('impact without a metric is a 400 that lists the metrics the guard reads', async () => {
  const w = await world()
  const refused = await failureOf(w.s.impact.impact(SYSTEM.principal, 'shop/checkout', { metric: '' }))
  expect(refused.code).toBe('INVALID_REQUEST')
  expect(refused.details.field).toBe('metric')
  expect(refused.message).toBe(
    'metric is required (?metric=): the guard of shop/checkout in development reads app.errors, app.requests, app.latency',
  )
})

test('impact of a metric no guard reads is a 404 that lists the ones it does', async () => {
  const w = await world()
  const refused = await failureOf(w.s.impact.impact(SYSTEM.principal, 'shop/checkout', { metric: 'app.nope' }))
  expect(refused.code).toBe('NOT_FOUND')
  expect(refused.message).toBe(
    'no guard of shop/checkout in development reads a metric named "app.nope"; it reads app.errors, app.requests, app.latency',
  )
})

test('impact of a flag with no guard says there is none to read', async () => {
  const w = await world()
  await w.s.flags.create(SYSTEM, { name: 'shop/plain', type: 'BOOLEAN', value: false })
  const refused = await failureOf(w.s.impact.impact(SYSTEM.principal, 'shop/plain', { metric: 'app.errors' }))
  expect(refused.code).toBe('NOT_FOUND')
  expect(refused.message).toBe(
    'no guard of shop/plain in development reads a metric named "app.errors"; shop/plain has no guarded rollout in development',
  )
})
