/** Logins and sessions over a real store with a controlled clock and a counting hasher (docs/api.md#authentication, docs/api.md#endpoints). */

import { expect, test } from 'bun:test'
import type { Principal } from '../../src/domain/principal.ts'
import type { StoredSession } from '../../src/domain/session.ts'
import { createAuthService } from '../../src/services/auth-service.ts'
import { createLoginThrottle } from '../../src/services/login-throttle.ts'
import type { PasswordHasher } from '../../src/services/password-hasher.ts'
import { createSessionService } from '../../src/services/session-service.ts'
import { createUserService } from '../../src/services/user-service.ts'
import { tempFileStores } from '../helpers/temp-store.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const stores = tempFileStores()

async function setup() {
  const store = await stores.open()
  let now = Date.parse('2026-11-22T10:00:00.000Z')
  const calls = { verify: 0, dummy: 0 }
  const hasher: PasswordHasher = {
    hash: async (p) => `h:${p}`,
    verify: async (p, h) => {
      calls.verify++
      return h === `h:${p}`
    },
    verifyDummy: async () => void calls.dummy++,
  }
  const clock = () => new Date(now)
  const limit = { maxFailures: 100, windowMs: 60_000 }
  const throttle = createLoginThrottle({ perUserAddress: limit, perAddress: limit, perUser: limit })
  const auth = createAuthService(store, hasher, throttle, { tokenTtlSeconds: 3600, now: clock })
  const sessions = createSessionService(store, clock)
  const users = createUserService(store, hasher, clock)
  await users.create(SYSTEM, { username: 'alice', password: 'alice-password', permissions: ['session:read'] })
  return { store, auth, sessions, calls, advance: (ms: number) => void (now += ms) }
}

const principal = (userId: string, sessionId: string): Principal => ({
  kind: 'user',
  userId,
  username: 'alice',
  sessionId,
  permissions: ['session:read'],
  flagPrefixes: [],
})
const callerOf = (userId: string, sessionId: string) => ({ principal: principal(userId, sessionId), requestId: 'test' })

test('an unknown username still costs a (dummy) hash verification', async () => {
  const { auth, calls } = await setup()
  await expect(auth.login('nobody', 'whatever-pw', '10.0.0.1', 'req')).rejects.toMatchObject({ code: 'UNAUTHORIZED' })
  expect(calls.dummy).toBe(1)
  await expect(auth.login('alice', 'wrong-pw', '10.0.0.1', 'req')).rejects.toMatchObject({ code: 'UNAUTHORIZED' })
  expect(calls).toEqual({ verify: 1, dummy: 1 })
})

test('an expired session is never accepted, never listed, and is pruned', async () => {
  const { auth, sessions, store, advance } = await setup()
  const { session, user } = await auth.login('alice', 'alice-password', '10.0.0.1', 'req')
  expect(auth.resolve(user.id, session.id).sessionId).toBe(session.id)
  const viewer = await auth.login('alice', 'alice-password', '10.0.0.1', 'req')
  advance(3600_000 - 1)
  expect(sessions.list(principal(user.id, viewer.session.id)).map((s) => s.id)).toContain(session.id)
  advance(1)
  expect(() => auth.resolve(user.id, session.id)).toThrow()
  expect(sessions.list(principal(user.id, viewer.session.id))).toEqual([])
  await expect(sessions.remove(callerOf(user.id, viewer.session.id), session.id)).rejects.toMatchObject({ code: 'NOT_FOUND' })
  expect(await auth.pruneExpired()).toBe(2)
  expect([...store.committed().sessions.keys()]).toEqual([])
})

test('lastUsedAt moves about once a minute, in memory only', async () => {
  const { auth, store, advance } = await setup()
  const { session, user } = await auth.login('alice', 'alice-password', '10.0.0.1', 'req')
  const commits = store.writes
  const stored = () => store.lastUsed('sessions', store.committed().sessions.get(session.id) as StoredSession)
  advance(59_000)
  auth.resolve(user.id, session.id)
  expect(stored()).toBe(session.lastUsedAt)
  advance(1_000)
  auth.resolve(user.id, session.id)
  expect(stored()).toBe('2026-11-22T10:01:00.000Z')
  expect(store.writes).toBe(commits)
})

test('a token whose session belongs to another user is refused', async () => {
  const { auth } = await setup()
  const { session } = await auth.login('alice', 'alice-password', '10.0.0.1', 'req')
  expect(() => auth.resolve('usr_someone_else', session.id)).toThrow()
})
