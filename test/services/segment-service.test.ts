/**
 * Segments as use cases (docs/targeting.md#rules, docs/environments.md#segments): named conditions
 * that rules use through `{"$ref": name}`; made and changed by name, checked (every `$ref` exists,
 * no cycle), listed with the flags and segments that use them in an environment; changing one moves
 * the revision of every flag that uses it, directly or through another segment; one still used
 * cannot be deleted. Segments have no rename of their own: a renamed flag is followed in `usedBy`.
 */

import { expect, test } from 'bun:test'
import type { Services } from '../../src/services/services.ts'
import { failureOf, START, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const writer = userCaller('usr_writer', ['flag:read', 'flag:write', 'environment:write'])
const beta = { description: 'opted in', rule: { in: [{ var: 'plan' }, ['beta']] } }

/** development (default) and staging; segment `beta`; flag `f` whose development rule uses it. */
async function world() {
  const w = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'development' } })
  await w.s.environments.put(writer, 'staging', {})
  await w.s.segments.put(writer, 'beta', beta)
  await w.s.flags.create(writer, { name: 'f', type: 'BOOLEAN', value: false, targeting: { if: [{ $ref: 'beta' }, 'true', 'false'] } })
  return w
}

const revision = (s: Services, name = 'f') => s.flags.get(SYSTEM.principal, name, 'development').revision
const segmentNames = (s: Services) => s.segments.list(SYSTEM.principal).map((x) => x.segment.name)

test('a segment is made at revision 1, the same body again writes nothing, a new rule moves its revision', async () => {
  const w = await world()
  const got = w.s.segments.get(SYSTEM.principal, 'beta')
  expect(got).toMatchObject({ segment: { name: 'beta', description: 'opted in', revision: 1 }, usedBy: { flags: ['f'], segments: [] } })
  expect(got.segment.createdAt).toBe(new Date(START).toISOString())
  w.advance(1_000)
  expect(await w.s.segments.put(writer, 'beta', beta)).toMatchObject({ created: false, segment: { revision: 1 } })
  const changed = await w.s.segments.put(writer, 'beta', { rule: { in: [{ var: 'plan' }, ['beta', 'pro']] } })
  expect(changed).toMatchObject({ created: false, segment: { revision: 2, description: '' } })
  expect(changed.segment.updatedAt).toBe(new Date(w.ms()).toISOString())
})

test('a bad segment is refused naming each field; nothing is made', async () => {
  const w = await world()
  const err = await failureOf(w.s.segments.put(writer, 'bad name', { rul: {}, description: 5 }))
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  expect((err.details.errors as { field: string }[]).map((p) => p.field).sort()).toEqual(['description', 'name', 'rul', 'rule'])
  const dangling = await failureOf(w.s.segments.put(writer, 'x', { rule: { $ref: 'nowhere' } }))
  expect(dangling).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(dangling.details.field).toStartWith('rule')
  expect(await failureOf(w.s.segments.put(writer, 'y', { rule: { notAnOperator: [1] } }))).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(segmentNames(w.s)).toEqual(['beta'])
})

test('a cycle between segments is refused, and the segments stay as they were', async () => {
  const w = await world()
  await w.s.segments.put(writer, 'pro', { rule: { or: [{ $ref: 'beta' }, { '==': [{ var: 'tier' }, 'pro'] }] } })
  const err = await failureOf(w.s.segments.put(writer, 'beta', { rule: { $ref: 'pro' } }))
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(err.message).toContain('cycle')
  expect(w.s.segments.get(SYSTEM.principal, 'beta').segment).toMatchObject({ revision: 1, rule: beta.rule })
  expect(await failureOf(w.s.segments.put(writer, 'self', { rule: { $ref: 'self' } }))).toMatchObject({ code: 'INVALID_REQUEST' })
})

test('a rule may $ref only an existing segment; the refusal names the place in the rule', async () => {
  const w = await world()
  const err = await failureOf(
    w.s.flags.create(writer, { name: 'g', type: 'BOOLEAN', targeting: { if: [true, { if: [{ $ref: 'gamma' }, 'true', 'false'] }] } }),
  )
  expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(err.details.field).toStartWith('targeting.if[1]')
  expect(w.s.flags.exists('g')).toBe(false)
  expect(await failureOf(w.s.flags.update(writer, 'f', { targeting: { $ref: 'gamma' } }))).toMatchObject({ code: 'INVALID_REQUEST' })
  expect(w.s.flags.get(SYSTEM.principal, 'f').targeting).toEqual({ if: [{ $ref: 'beta' }, 'true', 'false'] })
})

test('changing a rule moves the revision of every flag using it, directly, through a segment, or in another environment', async () => {
  const w = await world()
  await w.s.segments.put(writer, 'pro', { rule: { or: [{ $ref: 'beta' }, { '==': [{ var: 'tier' }, 'pro'] }] } })
  await w.s.flags.create(writer, { name: 'via', type: 'BOOLEAN', targeting: { if: [{ $ref: 'pro' }, 'true', 'false'] } })
  await w.s.flags.create(writer, { name: 'staged', type: 'BOOLEAN' })
  await w.s.flags.update(writer, 'staged', { targeting: { if: [{ $ref: 'beta' }, 'true', 'false'] } }, undefined, undefined, 'staging')
  await w.s.flags.create(writer, { name: 'other', type: 'BOOLEAN' })
  const revisions = () => ({
    f: revision(w.s, 'f'),
    via: revision(w.s, 'via'),
    staged: revision(w.s, 'staged'),
    other: revision(w.s, 'other'),
  })
  const before = revisions()
  // a new description changes no answer: no flag moves
  await w.s.segments.put(writer, 'beta', { ...beta, description: 'renamed in words' })
  expect(revisions()).toEqual(before)
  await w.s.segments.put(writer, 'beta', { rule: { in: [{ var: 'plan' }, ['beta', 'pro']] } })
  expect(revisions()).toEqual({ f: before.f + 1, via: before.via + 1, staged: before.staged + 1, other: before.other })
})

test('usedBy lists the flags whose rule in the environment asked uses it, then the segments', async () => {
  const w = await world()
  await w.s.flags.create(writer, { name: 'staged', type: 'BOOLEAN' })
  await w.s.flags.update(writer, 'staged', { targeting: { if: [{ $ref: 'beta' }, 'true', 'false'] } }, undefined, undefined, 'staging')
  await w.s.segments.put(writer, 'pro', { rule: { $ref: 'beta' } })
  expect(w.s.segments.get(SYSTEM.principal, 'beta').usedBy).toEqual({ flags: ['f'], segments: ['pro'] })
  expect(w.s.segments.get(SYSTEM.principal, 'beta', 'staging').usedBy).toEqual({ flags: ['f', 'staged'], segments: ['pro'] })
  expect(w.s.segments.list(SYSTEM.principal, 'staging').map((x) => [x.segment.name, x.usedBy.flags])).toEqual([
    ['beta', ['f', 'staged']],
    ['pro', []],
  ])
  expect(await failureOf(() => w.s.segments.list(SYSTEM.principal, 'nowhere'))).toMatchObject({ code: 'NOT_FOUND' })
  const stagingReader = userCaller('usr_sr', ['flag:read@staging'])
  expect(await failureOf(() => w.s.segments.get(stagingReader.principal, 'beta', 'development'))).toMatchObject({ code: 'FORBIDDEN' })
  const confined = userCaller('usr_c', ['flag:read'], { flagPrefixes: ['x/'] })
  expect(w.s.segments.get(confined.principal, 'beta').usedBy).toEqual({ flags: [], segments: ['pro'] })
})

test('a renamed flag is followed: usedBy names the new name', async () => {
  const w = await world()
  await w.s.flags.update(writer, 'f', { name: 'checkout/f' })
  expect(w.s.segments.get(SYSTEM.principal, 'beta').usedBy.flags).toEqual(['checkout/f'])
  expect(await failureOf(w.s.segments.remove(writer, 'beta'))).toMatchObject({
    code: 'CONFLICT',
    details: { usedBy: { flags: ['checkout/f'] } },
  })
})

test('a segment still used, by any environment or segment, is not deleted; once unused it is', async () => {
  const w = await world()
  await w.s.segments.put(writer, 'pro', { rule: { $ref: 'beta' } })
  expect(await failureOf(w.s.segments.remove(writer, 'beta'))).toMatchObject({
    code: 'CONFLICT',
    details: { usedBy: { flags: ['f'], segments: ['pro'] } },
  })
  await w.s.segments.remove(writer, 'pro')
  // used in staging only still holds it
  await w.s.flags.update(writer, 'f', { targeting: null })
  await w.s.flags.update(writer, 'f', { targeting: { if: [{ $ref: 'beta' }, 'true', 'false'] } }, undefined, undefined, 'staging')
  expect(w.s.segments.get(SYSTEM.principal, 'beta').usedBy.flags).toEqual([])
  expect(await failureOf(w.s.segments.remove(writer, 'beta'))).toMatchObject({ code: 'CONFLICT' })
  await w.s.flags.update(writer, 'f', { targeting: null }, undefined, undefined, 'staging')
  await w.s.segments.remove(writer, 'beta')
  expect(segmentNames(w.s)).toEqual([])
  expect(await failureOf(w.s.segments.remove(writer, 'beta'))).toMatchObject({ code: 'NOT_FOUND' })
  expect(await failureOf(() => w.s.segments.get(SYSTEM.principal, 'beta'))).toMatchObject({ code: 'NOT_FOUND' })
})

test('writing segments needs the unscoped flag:write, unconfined; reading needs flag:read', async () => {
  const w = await world()
  const callers = [
    userCaller('usr_reader', ['flag:read']),
    userCaller('usr_staging', ['flag:read', 'flag:write@staging']),
    userCaller('usr_confined', ['flag:read', 'flag:write'], { flagPrefixes: ['mobile/'] }),
  ]
  for (const as of callers) {
    expect(await failureOf(w.s.segments.put(as, 'beta', { rule: { '==': [1, 1] } }))).toMatchObject({ code: 'FORBIDDEN' })
    expect(await failureOf(w.s.segments.put(as, 'new', { rule: { '==': [1, 1] } }))).toMatchObject({ code: 'FORBIDDEN' })
  }
  await w.s.segments.put(writer, 'unused', { rule: { '==': [1, 1] } })
  for (const as of callers) expect(await failureOf(w.s.segments.remove(as, 'unused'))).toMatchObject({ code: 'FORBIDDEN' })
  expect(await failureOf(() => w.s.segments.list(userCaller('usr_none', ['user:read']).principal))).toMatchObject({ code: 'FORBIDDEN' })
  expect(segmentNames(w.s)).toEqual(['beta', 'unused'])
  expect(w.s.segments.get(SYSTEM.principal, 'beta').segment.revision).toBe(1)
})
