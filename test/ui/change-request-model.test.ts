/** docs/ui.md#change-requests: the tabs a request falls in, who it waits for, and when one approval completes it. */

import { describe, expect, test } from 'bun:test'
import { approvalCompletes, firstTab, inTab, needsReviewBy, type Request, tabCounts, tabOf } from '../../src/ui/app/change-request-model.ts'
import { changesAsJson, changesInWords, diffCaption } from '../../src/ui/app/change-request-words.ts'

const actor = (id: string) => ({ type: 'user', id, name: id })
const request = (over: Partial<Request> = {}): Request => ({
  id: 'cr_1',
  environment: 'production',
  title: 'Turn it on',
  description: '',
  state: 'open',
  author: actor('dev'),
  changes: [{ flag: 'shop/dark', set: { value: true } }],
  approvals: [],
  scheduledAt: null,
  createdAt: '2026-12-07T10:00:00Z',
  updatedAt: '2026-12-07T10:00:00Z',
  ...over,
})
const lead = { id: 'lead', permissions: ['flag:read', 'flag:approve@production'] }

describe('the tabs', () => {
  test('Needs my review: open, where I may approve, not mine, not approved by me already', () => {
    expect(needsReviewBy(request(), lead)).toBe(true)
    expect(needsReviewBy(request({ author: actor('lead') }), lead)).toBe(false)
    expect(needsReviewBy(request({ environment: 'staging' }), lead)).toBe(false)
    expect(needsReviewBy(request({ state: 'approved' }), lead)).toBe(false)
    expect(needsReviewBy(request({ approvals: [{ by: actor('lead'), at: '2026-12-07T11:00:00Z' }] }), lead)).toBe(false)
  })

  test('Open holds open and approved, Scheduled the scheduled, Closed every finished state', () => {
    const where = (state: string) =>
      (['review', 'open', 'scheduled', 'closed'] as const).filter((t) => inTab(request({ state, author: actor('lead') }), t, lead))
    expect(where('open')).toEqual(['open'])
    expect(where('approved')).toEqual(['open'])
    expect(where('scheduled')).toEqual(['scheduled'])
    for (const s of ['applied', 'rejected', 'cancelled', 'failed']) expect(where(s)).toEqual(['closed'])
  })

  test('counts per tab; the first tab is what needs me when anything does', () => {
    const all = [request(), request({ author: actor('lead') }), request({ state: 'scheduled' }), request({ state: 'failed' })]
    const counts = tabCounts(all, lead)
    expect(counts).toEqual({ review: 1, open: 2, scheduled: 1, closed: 1 })
    expect(firstTab(counts)).toBe('review')
    expect(firstTab({ ...counts, review: 0 })).toBe('open')
  })

  test('the address names a tab, or none', () => {
    expect(tabOf('?tab=closed')).toBe('closed')
    expect(tabOf('?tab=nonsense')).toBeNull()
    expect(tabOf('')).toBeNull()
  })
})

describe('Approve & apply', () => {
  test('offered when my approval is the last one needed', () => {
    expect(approvalCompletes(request(), lead, 1)).toBe(true)
    expect(approvalCompletes(request(), lead, 2)).toBe(false)
    expect(approvalCompletes(request({ approvals: [{ by: actor('ops'), at: '2026-12-07T11:00:00Z' }] }), lead, 2)).toBe(true)
  })

  test('not to the author, nor for a request that waits for its time', () => {
    expect(approvalCompletes(request({ author: actor('lead') }), lead, 1)).toBe(false)
    expect(approvalCompletes(request({ scheduledAt: '2030-01-01T00:00:00Z' }), lead, 1)).toBe(false)
  })
})

describe('a request in words', () => {
  const time = (iso: string) => iso.slice(0, 10)
  test('each field from what is served now to what it would be; rules and rollouts as sentences', () => {
    const rollout = { variant: 'true', start: '2030-01-01T09:00:00Z', end: '2030-01-08T09:00:00Z', fromPercent: 5, toPercent: 100 }
    const r = request({
      changes: [
        {
          flag: 'shop/dark',
          set: { value: true, enabled: true, rollout },
          diff: { value: { before: false, after: true }, rollout: { before: null, after: rollout } },
        },
        { flag: 'shop/old', set: {}, delete: true, diff: { exists: { before: true, after: false } } },
        { flag: 'shop/retired', set: {}, archive: true, diff: { archived: { before: false, after: true } } },
        { flag: 'shop/price', set: { defaultValue: 5 }, diff: { defaultValue: { before: 3, after: 5 } } },
      ],
    })
    expect(changesInWords(r, time)).toEqual([
      {
        flag: 'shop/dark',
        words:
          'value false → true; enabled true (already so); rollout none → rollout of "true" from 5 % on 2030-01-01 to 100 % on 2030-01-08',
        everywhere: false,
      },
      { flag: 'shop/old', words: 'deleted', everywhere: true },
      { flag: 'shop/retired', words: 'archived', everywhere: true },
      { flag: 'shop/price', words: 'default value 3 → 5', everywhere: true },
    ])
  })

  test('a closed request says what it set', () => {
    const r = request({ state: 'applied', changes: [{ flag: 'shop/dark', set: { value: true }, diff: {} }] })
    expect(changesInWords(r, time)[0]?.words).toBe('value → true')
  })

  test('an applied request says what it set even when the environment has changed since', () => {
    const r = request({
      state: 'applied',
      appliedAt: '2026-12-07T11:00:00Z',
      changes: [{ flag: 'shop/dark', set: { value: true }, diff: { value: { before: false, after: true } } }],
    })
    expect(changesInWords(r, time)[0]?.words).toBe('value → true')
  })

  test("the table's heading says what the request does, did, or would do", () => {
    const at = (iso: string) => `at ${iso.slice(11, 16)}`
    expect(diffCaption(request({}), false, at)).toBe('What it changes in production')
    expect(diffCaption(request({ state: 'scheduled', scheduledAt: '2026-12-08T09:00:00Z' }), false, at)).toBe(
      'What it changes in production, at at 09:00',
    )
    expect(diffCaption(request({}), true, at)).toBe('What it changes in production: nothing; production serves all of it now.')
    const applied = request({ state: 'applied', appliedAt: '2026-12-07T11:00:00Z' })
    expect(diffCaption(applied, true, at)).toBe('Applied at 11:00: production serves all of it now.')
    expect(diffCaption(applied, false, at)).toBe(
      'Applied at 11:00; production has changed since. What it serves now beside what the request set',
    )
    expect(diffCaption(request({ state: 'rejected' }), false, at)).toBe('Not applied (rejected): what it would change in production now')
    expect(diffCaption(request({ state: 'cancelled' }), true, at)).toBe('Not applied (cancelled): production serves all of it now anyway.')
  })

  test('the JSON view is the changes as the API takes them, without the diff', () => {
    const r = request({ changes: [{ flag: 'shop/dark', set: { value: true }, diff: { value: { before: false, after: true } } }] })
    expect(JSON.parse(changesAsJson(r))).toEqual([{ flag: 'shop/dark', set: { value: true } }])
  })
})
