/** What the Flags page's counters count (src/ui/app/flag-counts.ts), without a browser. */

import { expect, test } from 'bun:test'
import { changedLately, countsOf, type ListedRequest, mayReview } from '../../src/ui/app/flag-counts.ts'

const NOW = Date.parse('2026-12-07T12:00:00.000Z')
const request = (over: Partial<ListedRequest>): ListedRequest => ({
  id: 'cr_1',
  environment: 'production',
  state: 'open',
  author: { id: 'usr_dev' },
  approvals: [],
  changes: [{ flag: 'a' }],
  ...over,
})

test('Needs your review: open requests of others, not yet approved by me, where I hold flag:approve', () => {
  const lead = ['flag:read', 'flag:approve@production']
  expect(mayReview(request({}), 'usr_lead', lead)).toBe(true)
  expect(mayReview(request({ author: { id: 'usr_lead' } }), 'usr_lead', lead)).toBe(false) // my own
  expect(mayReview(request({ approvals: [{ by: { id: 'usr_lead' } }] }), 'usr_lead', lead)).toBe(false) // approved already
  expect(mayReview(request({ environment: 'staging' }), 'usr_lead', lead)).toBe(false) // no flag:approve there
  for (const state of ['approved', 'scheduled', 'applied', 'rejected', 'cancelled'])
    expect([state, mayReview(request({ state }), 'usr_lead', lead)]).toEqual([state, false])
  expect(mayReview(request({ environment: 'staging' }), 'usr_admin', ['flag:approve'])).toBe(true) // unscoped: everywhere
})

test('Changed in 24 h by the given clock; Rolling out while a rollout runs; Stale as usage says', () => {
  const at = (hoursAgo: number) => new Date(NOW - hoursAgo * 3_600_000).toISOString()
  expect(changedLately({ name: 'x', updatedAt: at(23.9) }, NOW)).toBe(true)
  expect(changedLately({ name: 'x', updatedAt: at(24.1) }, NOW)).toBe(false)
  expect(changedLately({ name: 'x' }, NOW)).toBe(false)
  const flags = [
    { name: 'a', updatedAt: at(1), rollout: { status: 'running' } },
    { name: 'b', updatedAt: at(30), rollout: { status: 'done' } },
    { name: 'c', updatedAt: at(48), rollout: null },
  ]
  const usage = new Map([
    ['b', { stale: true }],
    ['c', { stale: false }],
    ['gone', { stale: true }],
  ])
  expect(countsOf(flags, usage, 2, NOW)).toEqual({ review: 2, rolling: 1, changed: 1, stale: 1 })
})
