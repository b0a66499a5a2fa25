/**
 * Change requests as use cases (docs/change-control.md#change-requests): made against a revision and
 * checked field by field, approved by as many people as the environment requires (never the
 * author, never twice by one person), applied all or nothing, rejected, cancelled, edited and
 * scheduled on the clock the services read. Who may act through a token is in
 * change-request-rights.test.ts; the protection of every write path in protected-writes.test.ts.
 */

import { expect, test } from 'bun:test'
import type { Caller } from '../../src/domain/principal.ts'
import type { Services } from '../../src/services/services.ts'
import { failureOf, START, storedUser, systemCaller, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'environment:write'])

/**
 * production (the default, protected, `approvals` required) and staging; flags `f` (INTEGER 0..10)
 * = 1 and `g` (BOOLEAN) = false; `author` may write, `lead1` and `lead2` approve production.
 */
async function world(approvals = 1) {
  const w = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'production' } })
  const { s } = w
  await s.flags.create(admin, { name: 'f', type: 'INTEGER', value: 1, minValue: 0, maxValue: 10 })
  await s.flags.create(admin, { name: 'g', type: 'BOOLEAN', value: false })
  await s.environments.put(admin, 'staging', {})
  await s.environments.put(admin, 'production', { protected: true, requiredApprovals: approvals })
  const author = await storedUser(s, 'author', ['flag:read', 'flag:write'])
  const lead1 = await storedUser(s, 'lead1', ['flag:read', 'flag:approve@production'])
  const lead2 = await storedUser(s, 'lead2', ['flag:read', 'flag:approve@production'])
  /** A request by `author` in production setting `f` (or what `extra` says). */
  const request = async (extra: Record<string, unknown> = {}) =>
    s.changeRequests.create(author.as(), {
      environment: 'production',
      title: 'raise f',
      changes: [{ flag: 'f', set: { value: 2 } }],
      ...extra,
    })
  return { ...w, author, lead1, lead2, request }
}

const value = (s: Services, name = 'f', env = 'production') => s.flags.get(SYSTEM.principal, name, env).value
const stateOf = (s: Services, id: string) => s.changeRequests.get(SYSTEM.principal, id).state
const auditActions = async (s: Services) => (await s.audit.list(SYSTEM.principal, { limit: 50 })).entries.map((e) => e.action)

test('a request in a protected environment waits for its approvals; with none required it is approved at once', async () => {
  const w = await world()
  const made = await w.request()
  expect(made).toMatchObject({ state: 'open', environment: 'production', title: 'raise f', approvals: [], scheduledAt: null })
  expect(made.author).toMatchObject({ type: 'user', id: w.author.id })
  expect(made.createdAt).toBe(new Date(START).toISOString())
  const staged = await w.s.changeRequests.create(w.author.as(), {
    environment: 'staging',
    title: 'second pair of eyes',
    changes: [{ flag: 'f', set: { value: 3 } }],
  })
  expect(staged.state).toBe('approved')
  expect(value(w.s)).toBe(1)
})

test('a request is checked when made: each problem named by its field, nothing stored', async () => {
  const w = await world()
  const err = await failureOf(
    w.request({
      title: ' ',
      changes: [
        { flag: 'f', set: { value: 11 } },
        { flag: 'nope', set: { value: 1 } },
        { flag: 'g', set: { description: 'x' } },
      ],
    }),
  )
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  expect((err.details.errors as { field: string }[]).map((p) => p.field)).toEqual(['title', 'changes[2].set.description'])
  const later = await failureOf(
    w.request({
      changes: [
        { flag: 'f', set: { value: 11 } },
        { flag: 'nope', set: { value: 1 } },
      ],
    }),
  )
  expect((later.details.errors as { field: string }[]).map((p) => p.field)).toEqual(['changes[0].set.value', 'changes[1].flag'])
  expect(await failureOf(w.request({ environment: 'nowhere' }))).toMatchObject({ details: { field: 'environment' } })
  expect(await failureOf(w.request({ scheduledAt: 'tomorrow' }))).toMatchObject({ details: { field: 'scheduledAt' } })
  expect(w.s.changeRequests.list(SYSTEM.principal, {})).toEqual([])
})

test('making one needs flag:write in its environment, and the unscoped one for a shared field or a deletion', async () => {
  const w = await world()
  const reader = userCaller('usr_reader', ['flag:read'])
  const stagingOnly = userCaller('usr_staging', ['flag:read', 'flag:write@staging'])
  const prodState = userCaller('usr_prod', ['flag:read', 'flag:write@production'])
  const body = { environment: 'production', title: 't', changes: [{ flag: 'f', set: { value: 2 } }] }
  expect(await failureOf(w.s.changeRequests.create(reader, body))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(w.s.changeRequests.create(stagingOnly, body))).toMatchObject({ code: 'FORBIDDEN' })
  expect((await w.s.changeRequests.create(prodState, body)).state).toBe('open')
  for (const change of [
    { flag: 'f', delete: true },
    { flag: 'f', set: { defaultValue: 4 } },
  ])
    expect(await failureOf(w.s.changeRequests.create(prodState, { ...body, changes: [change] }))).toMatchObject({ code: 'FORBIDDEN' })
})

test('approvals count people: two required need two approvers, one person counts once, the author never', async () => {
  const w = await world(2)
  const { id } = await w.request()
  expect(await failureOf(w.s.changeRequests.approve(w.author.as(), id, {}))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await w.s.changeRequests.approve(w.lead1.as(), id, { comment: 'fine' })).toMatchObject({ state: 'open' })
  expect(await failureOf(w.s.changeRequests.approve(w.lead1.as(), id, {}))).toMatchObject({ code: 'CONFLICT' })
  expect(stateOf(w.s, id)).toBe('open')
  const approved = await w.s.changeRequests.approve(w.lead2.as(), id, {})
  expect(approved.state).toBe('approved')
  expect(approved.approvals.map((a) => [a.by.id, a.comment])).toEqual([
    [w.lead1.id, 'fine'],
    [w.lead2.id, undefined],
  ])
  expect(value(w.s)).toBe(1)
})

test('approving needs flag:approve in the request environment', async () => {
  const w = await world()
  const { id } = await w.request()
  const stagingLead = userCaller('usr_sl', ['flag:read', 'flag:approve@staging'])
  expect(await failureOf(w.s.changeRequests.approve(stagingLead, id, {}))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(w.s.changeRequests.approve(w.lead1.as(), id, { coment: 'x' }))).toMatchObject({
    code: 'INVALID_REQUEST',
    details: { field: 'coment' },
  })
  expect(stateOf(w.s, id)).toBe('open')
})

test('apply: by its author or an approver once approved; every change in one commit, audited as the request', async () => {
  const w = await world()
  const { id } = await w.request({
    changes: [
      { flag: 'f', set: { value: 4 } },
      { flag: 'g', set: { value: true, enabled: false } },
    ],
  })
  expect(await failureOf(w.s.changeRequests.apply(w.author.as(), id))).toMatchObject({ code: 'CONFLICT', details: { state: 'open' } })
  await w.s.changeRequests.approve(w.lead1.as(), id, {})
  expect(await failureOf(w.s.changeRequests.apply(w.lead2.as(), id))).toMatchObject({ code: 'FORBIDDEN' })
  w.advance(1_000)
  const applied = await w.s.changeRequests.apply(w.author.as(), id)
  expect(applied).toMatchObject({ state: 'applied', appliedAt: new Date(w.ms()).toISOString() })
  expect(value(w.s, 'f')).toBe(4)
  expect(w.s.flags.get(SYSTEM.principal, 'g', 'production')).toMatchObject({ value: true, enabled: false })
  // staging is untouched: a request changes its own environment
  expect(value(w.s, 'f', 'staging')).toBe(1)
  expect(await failureOf(w.s.changeRequests.apply(w.author.as(), id))).toMatchObject({ code: 'CONFLICT' })
  const { entries } = await w.s.audit.list(SYSTEM.principal, { limit: 50 })
  expect(entries.filter((e) => e.changeRequest === id && e.action === 'flag.updated').map((e) => e.target.name)).toEqual(
    expect.arrayContaining(['f', 'g']),
  )
  expect(await auditActions(w.s)).toEqual(
    expect.arrayContaining(['change-request.created', 'change-request.approved', 'change-request.applied']),
  )
})

test('a request made against a revision fails when its flag changed in its environment since, and applies nothing', async () => {
  const w = await world()
  const bypasser = userCaller('usr_bypass', ['flag:read', 'flag:write', 'flag:bypass'])
  const { id } = await w.request({
    changes: [
      { flag: 'g', set: { value: true } },
      { flag: 'f', set: { value: 2 } },
    ],
  })
  await w.s.changeRequests.approve(w.lead1.as(), id, {})
  // a change confined to another environment does not fail it
  await w.s.flags.update(admin, 'f', { value: 5 }, undefined, undefined, 'staging')
  await w.s.flags.update(bypasser, 'f', { value: 7 })
  const err = await failureOf(w.s.changeRequests.apply(w.author.as(), id))
  expect(err).toMatchObject({ code: 'CONFLICT', details: { state: 'failed' } })
  expect(err.details.failureReason).toContain('f')
  expect(w.s.changeRequests.get(SYSTEM.principal, id)).toMatchObject({ state: 'failed', failureReason: err.details.failureReason })
  expect(value(w.s, 'f')).toBe(7)
  expect(value(w.s, 'g')).toBe(false)
})

test('a change confined to another environment since it was made does not fail it', async () => {
  const w = await world()
  const { id } = await w.request()
  await w.s.changeRequests.approve(w.lead1.as(), id, {})
  await w.s.flags.update(admin, 'f', { value: 5 }, undefined, undefined, 'staging')
  expect((await w.s.changeRequests.apply(w.author.as(), id)).state).toBe('applied')
  expect(value(w.s)).toBe(2)
})

test('reject: by an approver with a comment, never by the author; a rejected request is done', async () => {
  const w = await world()
  const { id } = await w.request()
  expect(await failureOf(w.s.changeRequests.reject(w.author.as(), id, { comment: 'no' }))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(w.s.changeRequests.reject(w.lead1.as(), id, {}))).toMatchObject({ details: { field: 'comment' } })
  const rejected = await w.s.changeRequests.reject(w.lead1.as(), id, { comment: 'not before the freeze' })
  expect(rejected).toMatchObject({ state: 'rejected', rejection: { by: { id: w.lead1.id }, comment: 'not before the freeze' } })
  expect(await failureOf(w.s.changeRequests.approve(w.lead2.as(), id, {}))).toMatchObject({ code: 'CONFLICT' })
  expect(await failureOf(w.s.changeRequests.cancel(w.author.as(), id))).toMatchObject({ code: 'CONFLICT' })
  expect(value(w.s)).toBe(1)
})

test('cancel: its author alone, while pending; then nothing more happens to it', async () => {
  const w = await world()
  const { id } = await w.request()
  await w.s.changeRequests.approve(w.lead1.as(), id, {})
  expect(await failureOf(w.s.changeRequests.cancel(w.lead1.as(), id))).toMatchObject({ code: 'FORBIDDEN' })
  expect((await w.s.changeRequests.cancel(w.author.as(), id)).state).toBe('cancelled')
  expect(await failureOf(w.s.changeRequests.apply(w.author.as(), id))).toMatchObject({ code: 'CONFLICT' })
  expect(
    await failureOf(w.s.changeRequests.edit(w.author.as(), id, { title: 'again', changes: [{ flag: 'f', set: { value: 3 } }] })),
  ).toMatchObject({ code: 'CONFLICT' })
  expect(value(w.s)).toBe(1)
})

test('an edit by its author checks the changes again and clears the approvals; nobody else edits', async () => {
  const w = await world()
  const { id } = await w.request()
  await w.s.changeRequests.approve(w.lead1.as(), id, {})
  const body = { title: 'raise f more', changes: [{ flag: 'f', set: { value: 3 } }] }
  expect(await failureOf(w.s.changeRequests.edit(w.lead1.as(), id, body))).toMatchObject({ code: 'FORBIDDEN' })
  expect(
    await failureOf(w.s.changeRequests.edit(w.author.as(), id, { ...body, changes: [{ flag: 'f', set: { value: 30 } }] })),
  ).toMatchObject({ details: { field: 'changes[0].set.value' } })
  expect(stateOf(w.s, id)).toBe('approved')
  const edited = await w.s.changeRequests.edit(w.author.as(), id, body)
  expect(edited).toMatchObject({ state: 'open', approvals: [], title: 'raise f more' })
  // the one who approved the old version may approve the new one
  await w.s.changeRequests.approve(w.lead1.as(), id, {})
  await w.s.changeRequests.apply(w.lead1.as(), id)
  expect(value(w.s)).toBe(3)
})

test('a scheduled request waits for its time on the clock, then is applied as the schedule, late when late', async () => {
  const w = await world()
  const at = new Date(w.ms() + 3_600_000).toISOString()
  const { id } = await w.request({ scheduledAt: at })
  expect((await w.s.changeRequests.approve(w.lead1.as(), id, {})).state).toBe('scheduled')
  w.advance(3_599_000)
  expect(await w.s.changeRequests.applyDue()).toEqual([])
  expect(value(w.s)).toBe(1)
  w.advance(61_000)
  const [outcome, ...more] = await w.s.changeRequests.applyDue()
  expect(more).toEqual([])
  expect(outcome).toMatchObject({ request: { id, state: 'applied' }, lateSeconds: 60 })
  expect(value(w.s)).toBe(2)
  const entry = (await w.s.audit.list(SYSTEM.principal, { limit: 50 })).entries.find(
    (e) => e.changeRequest === id && e.action === 'flag.updated',
  )
  expect(entry).toMatchObject({ source: 'schedule', lateSeconds: 60, actor: { id: w.author.id } })
  // once applied, the next round finds nothing
  expect(await w.s.changeRequests.applyDue()).toEqual([])
})

test('a scheduled request may be applied now; one whose time passed before its last approval is applied at once', async () => {
  const w = await world()
  const later = await w.request({ scheduledAt: new Date(w.ms() + 3_600_000).toISOString() })
  await w.s.changeRequests.approve(w.lead1.as(), later.id, {})
  expect((await w.s.changeRequests.apply(w.author.as(), later.id)).state).toBe('applied')
  expect(value(w.s)).toBe(2)
  const past = await w.request({ scheduledAt: new Date(w.ms() + 1_000).toISOString(), changes: [{ flag: 'f', set: { value: 3 } }] })
  w.advance(10_000)
  expect((await w.s.changeRequests.approve(w.lead1.as(), past.id, {})).state).toBe('applied')
  expect(value(w.s)).toBe(3)
})

test('a deletion approved in the protected environment deletes the flag everywhere; a read shows its diff', async () => {
  const w = await world()
  const { id } = await w.request({ changes: [{ flag: 'g', delete: true }] })
  expect(w.s.changeRequests.get(SYSTEM.principal, id).changes).toEqual([
    { flag: 'g', set: {}, delete: true, diff: { exists: { before: true, after: false } } },
  ])
  await w.s.changeRequests.approve(w.lead1.as(), id, {})
  await w.s.changeRequests.apply(w.author.as(), id)
  expect(w.s.flags.exists('g')).toBe(false)
})

test('a read shows each change against what the environment serves now', async () => {
  const w = await world()
  const { id } = await w.request({ changes: [{ flag: 'f', set: { value: 2, enabled: true } }] })
  expect(w.s.changeRequests.get(SYSTEM.principal, id).changes).toEqual([
    { flag: 'f', set: { value: 2, enabled: true }, diff: { value: { before: 1, after: 2 } } },
  ])
})

test('lists filter by state, environment and flag, newest first, and show only what the reader may read', async () => {
  const w = await world()
  const first = await w.request()
  w.advance(1_000)
  const second = await w.request({ changes: [{ flag: 'g', set: { value: true } }] })
  w.advance(1_000)
  const staged = await w.s.changeRequests.create(w.author.as(), {
    environment: 'staging',
    title: 'staging',
    changes: [{ flag: 'f', set: { value: 3 } }],
  })
  const ids = (as: Caller, filter: Parameters<Services['changeRequests']['list']>[1]) =>
    w.s.changeRequests.list(as.principal, filter).map((r) => r.id)
  expect(ids(SYSTEM, {})).toEqual([staged.id, second.id, first.id])
  expect(ids(SYSTEM, { environment: 'production' })).toEqual([second.id, first.id])
  expect(ids(SYSTEM, { flag: 'f' })).toEqual([staged.id, first.id])
  expect(ids(SYSTEM, { state: 'approved' })).toEqual([staged.id])
  expect(await failureOf(() => ids(SYSTEM, { state: 'done' as never }))).toMatchObject({ details: { field: 'state' } })
  expect(await failureOf(() => ids(SYSTEM, { environment: 'nowhere' }))).toMatchObject({ code: 'NOT_FOUND' })
  const stagingReader = userCaller('usr_sr', ['flag:read@staging'])
  expect(ids(stagingReader, {})).toEqual([staged.id])
  expect(await failureOf(() => w.s.changeRequests.get(stagingReader.principal, first.id))).toMatchObject({ code: 'NOT_FOUND' })
  const confined = userCaller('usr_c', ['flag:read'], { flagPrefixes: ['g'] })
  expect(ids(confined, {})).toEqual([second.id])
})

test('the command line approves as itself (never the author) and applies what others approved', async () => {
  const w = await world()
  const cli = systemCaller('cli')
  const { id } = await w.request()
  expect((await w.s.changeRequests.approve(cli, id, {})).state).toBe('approved')
  expect((await w.s.changeRequests.apply(cli, id)).state).toBe('applied')
  expect(value(w.s)).toBe(2)
})

test('an author who may no longer write there edits nothing: an edit is a new proposal and needs what making one needs', async () => {
  const w = await world()
  const { id } = await w.request()
  await w.s.users.update(SYSTEM, w.author.id, { permissions: ['flag:read'] })
  const body = { title: 'raise f more', changes: [{ flag: 'f', set: { value: 9 } }] }
  expect(await failureOf(w.s.changeRequests.edit(w.author.as(), id, body))).toMatchObject({ code: 'FORBIDDEN' })
  expect(w.s.changeRequests.get(SYSTEM.principal, id)).toMatchObject({ title: 'raise f', changes: [{ flag: 'f', set: { value: 2 } }] })
  // withdrawing stays theirs
  expect((await w.s.changeRequests.cancel(w.author.as(), id)).state).toBe('cancelled')
})

test('a scheduled request cancelled before its time is never applied; one whose flag changed since fails at its time', async () => {
  const w = await world()
  const soon = () => new Date(w.ms() + 60_000).toISOString()
  const cancelled = await w.request({ scheduledAt: soon() })
  await w.s.changeRequests.approve(w.lead1.as(), cancelled.id, {})
  await w.s.changeRequests.cancel(w.author.as(), cancelled.id)
  const stale = await w.request({ scheduledAt: soon(), changes: [{ flag: 'g', set: { value: true } }] })
  await w.s.changeRequests.approve(w.lead1.as(), stale.id, {})
  await w.s.flags.update(userCaller('usr_bypass', ['flag:read', 'flag:write', 'flag:bypass']), 'g', { enabled: false })
  w.advance(120_000)
  const outcomes = await w.s.changeRequests.applyDue()
  expect(outcomes.map((o) => [o.request.id, o.request.state])).toEqual([[stale.id, 'failed']])
  expect(outcomes[0]?.failureReason).toContain('changed in production since the request was made')
  expect(value(w.s)).toBe(1)
  expect(w.s.flags.get(SYSTEM.principal, 'g', 'production')).toMatchObject({ value: false, enabled: false })
  expect(await auditActions(w.s)).toContain('change-request.failed')
})

test('a rollout in a request is checked when made, each mistake named under its field', async () => {
  const w = await world()
  const err = await failureOf(
    w.request({
      changes: [
        { flag: 'g', set: { rollout: { variant: 'true', start: 'x', end: '2026-12-02T00:00:00Z', fromPercent: 50, toPercent: 10 } } },
      ],
    }),
  )
  expect((err.details.errors as { field: string }[]).map((p) => p.field)).toEqual([
    'changes[0].set.rollout.start',
    'changes[0].set.rollout.toPercent',
  ])
})

test('an approver who has since lost flag:approve there applies nothing; the author still may', async () => {
  const w = await world()
  const { id } = await w.request()
  await w.s.changeRequests.approve(w.lead1.as(), id, {})
  await w.s.users.update(SYSTEM, w.lead1.id, { permissions: ['flag:read'] })
  expect(await failureOf(w.s.changeRequests.apply(w.lead1.as(), id))).toMatchObject({ code: 'FORBIDDEN' })
  expect(stateOf(w.s, id)).toBe('approved')
  expect((await w.s.changeRequests.apply(w.author.as(), id)).state).toBe('applied')
})

test('a dry-run promotion into a protected environment still answers; the promotion itself needs a request or a bypass', async () => {
  const w = await world()
  await w.s.flags.update(admin, 'f', { value: 4 }, undefined, undefined, 'staging')
  const dry = await w.s.environments.promote(w.author.as(), 'production', { from: 'staging', dryRun: true })
  expect(dry).toMatchObject({ dryRun: true, changes: [{ name: 'f', diff: { value: { before: 1, after: 4 } } }] })
  expect(await failureOf(w.s.environments.promote(w.author.as(), 'production', { from: 'staging' }))).toMatchObject({
    code: 'CHANGE_REQUEST_REQUIRED',
    details: { environment: 'production' },
  })
  expect(value(w.s)).toBe(1)
})
