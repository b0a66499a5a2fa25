/**
 * Scheduled change requests due at once are applied together (docs/change-control.md#scheduled-changes):
 * in a few commits rather than one each, while each still succeeds or fails on its own, is
 * recorded as the schedule's by its author, and is applied exactly once however many rounds run.
 */

import { expect, test } from 'bun:test'
import { AppError, UnavailableError } from '../../src/domain/errors.ts'
import { type ApplyNow, createChangeRequestApplier } from '../../src/services/change-request-applier.ts'
import { createScheduledApply } from '../../src/services/change-request-scheduled-apply.ts'
import { failureOf, START, storedUser, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'flag:bypass', 'environment:write'])
const COUNT = 120

/** `COUNT` flags `f0`…, and as many requests by `author`, each raising one flag, all due at the same second. */
async function manyDue() {
  const w = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'production' } })
  const flags = Object.fromEntries(Array.from({ length: COUNT }, (_, i) => [`f${i}`, { type: 'INTEGER', value: 1 }]))
  const doc = { environment: 'production', version: '1.0.0', createdAt: '2026-12-01T00:00:00.000Z', flags }
  await w.s.migrations.importDocument(SYSTEM, doc, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
  const author = await storedUser(w.s, 'author', ['flag:read', 'flag:write'])
  const at = new Date(START + 60_000).toISOString()
  const ids: string[] = []
  for (let i = 0; i < COUNT; i++) {
    const made = await w.s.changeRequests.create(author.as(), {
      environment: 'production',
      title: `raise f${i}`,
      changes: [{ flag: `f${i}`, set: { value: 7 } }],
      scheduledAt: at,
    })
    expect(made.state).toBe('scheduled')
    ids.push(made.id)
  }
  return { ...w, author, ids }
}

test('requests due at the same second are applied in a few commits; one that fails fails alone, each audited as its own', async () => {
  const w = await manyDue()
  // f3 changes after its request was made: that request fails at its time, the others apply
  await w.s.flags.update(admin, 'f3', { value: 2 })
  w.advance(60_000)
  const writes = w.store.writes
  const outcomes = await w.s.changeRequests.applyDue()
  expect(w.store.writes - writes).toBeLessThanOrEqual(4)
  expect(outcomes.map((o) => o.request.id).sort()).toEqual([...w.ids].sort())
  const failed = outcomes.filter((o) => o.request.state === 'failed')
  expect(failed.map((o) => o.request.id)).toEqual([w.ids[3] as string])
  expect(failed[0]?.failureReason).toContain('changed in production since the request was made')
  expect(outcomes.filter((o) => o.request.state === 'applied').length).toBe(COUNT - 1)
  expect(outcomes.every((o) => o.lateSeconds === undefined)).toBe(true)
  for (let i = 0; i < COUNT; i++) expect(w.s.flags.get(SYSTEM.principal, `f${i}`, 'production').value).toBe(i === 3 ? 2 : 7)
  const entries = (await w.s.audit.list(SYSTEM.principal, { limit: 1000 })).entries
  const updates = entries.filter((e) => e.action === 'flag.updated' && e.changeRequest !== undefined)
  expect(updates.length).toBe(COUNT - 1)
  expect(new Set(updates.map((e) => e.changeRequest)).size).toBe(COUNT - 1)
  for (const e of updates) expect(e).toMatchObject({ source: 'schedule', actor: { id: w.author.id } })
  const failures = entries.filter((e) => e.action === 'change-request.failed')
  expect(failures).toMatchObject([{ target: { id: w.ids[3] }, source: 'schedule', actor: { id: w.author.id } }])
  // the next round finds nothing and writes nothing
  expect(await w.s.changeRequests.applyDue()).toEqual([])
  expect(w.store.writes - writes).toBeLessThanOrEqual(4)
})

test('rounds that overlap (replicas, a restart) apply each request once', async () => {
  const w = await manyDue()
  w.advance(90_000)
  const rounds = await Promise.all([w.s.changeRequests.applyDue(), w.s.changeRequests.applyDue(), w.s.changeRequests.applyDue()])
  const reported = rounds.flat().map((o) => o.request.id)
  expect(reported.sort()).toEqual([...w.ids].sort())
  expect(rounds.flat().every((o) => o.request.state === 'applied' && o.lateSeconds === 30)).toBe(true)
  const updates = (await w.s.audit.list(SYSTEM.principal, { limit: 1000 })).entries.filter((e) => e.action === 'flag.updated')
  expect(updates.filter((e) => e.changeRequest !== undefined).length).toBe(COUNT)
  expect(updates.every((e) => e.changeRequest === undefined || e.lateSeconds === 30)).toBe(true)
})

test('a request whose commit is refused becomes failed with the reason; the others of its round still apply', async () => {
  const w = await manyDue()
  w.advance(60_000)
  const deps = { store: w.store, now: () => new Date(w.ms()) }
  const { applyNow, failNow } = createChangeRequestApplier(deps)
  // the store refuses the commit of one request (as its write check would): a stand-in in front of the real applier
  const refused = w.ids[5] as string
  const refusing: ApplyNow = async (caller, id, source, late) => {
    if (id === refused) throw new AppError('FORBIDDEN', 'the environment refused this change')
    return applyNow(caller, id, source, late)
  }
  const outcomes = await createScheduledApply({ ...deps, applyNow: refusing, failNow }).applyDue()
  expect(outcomes.length).toBe(COUNT)
  expect(outcomes.find((o) => o.request.id === refused)).toMatchObject({
    request: { state: 'failed', failureReason: 'the environment refused this change' },
    failureReason: 'the environment refused this change',
  })
  expect(w.s.changeRequests.get(SYSTEM.principal, refused).state).toBe('failed')
  expect(outcomes.filter((o) => o.request.state === 'applied').length).toBe(COUNT - 1)
  const failed = (await w.s.audit.list(SYSTEM.principal, { limit: 1000 })).entries.filter((e) => e.action === 'change-request.failed')
  expect(failed).toMatchObject([{ target: { id: refused }, source: 'schedule', actor: { id: w.author.id } }])
})

test('a commit that fails because the store cannot write fails no request: it stays scheduled for the next round', async () => {
  const w = await manyDue()
  w.advance(60_000)
  const deps = { store: w.store, now: () => new Date(w.ms()) }
  const { applyNow, failNow } = createChangeRequestApplier(deps)
  const unlucky = w.ids[7] as string
  let down = true
  const outage: ApplyNow = async (caller, id, source, late) => {
    if (id === unlucky && down) throw new UnavailableError()
    return applyNow(caller, id, source, late)
  }
  const schedule = createScheduledApply({ ...deps, applyNow: outage, failNow })
  expect(await failureOf(schedule.applyDue())).toBeInstanceOf(UnavailableError)
  expect(w.s.changeRequests.get(SYSTEM.principal, unlucky).state).toBe('scheduled')
  expect(w.s.changeRequests.list(SYSTEM.principal, { state: 'applied' }).length).toBe(COUNT - 1)
  down = false
  expect((await schedule.applyDue()).map((o) => [o.request.id, o.request.state])).toEqual([[unlucky, 'applied']])
})
