/**
 * The credential caches (docs/architecture.md#caching: `credentials`, `verified-sessions`,
 * `verified-api-tokens`) answer as the whole authentication with nothing kept: the same principal
 * (permissions, flag prefixes, environment) or the same refusal, over random sequences of requests
 * by sessions and API tokens, in either header, interleaved with what changes a credential (a
 * user's permissions or prefixes, a logout, a revocation) and with time passing (an expiry, the
 * second an entry is held).
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import fc from 'fast-check'
import { RequestCache } from '../../src/domain/request-cache.ts'
import { type AuthDeps, authenticate } from '../../src/http/authenticate.ts'
import { createCredentialCache } from '../../src/http/credential-cache.ts'
import { createSessionTokenCodec } from '../../src/http/session-token-codec.ts'
import { createApiTokenService } from '../../src/services/api-token-service.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

const SECRET = 'a-test-secret-of-enough-length-for-hs256-0123456789'
// the app's own session codec reads the real clock, so the test's starts there
let current = Date.now()
const now = () => new Date(current)
const clock = () => current

let t: TestApp
let users: { id: string; username: string; password: string }[]
let tokensMade = 0

/** Authentication over `cache`: the session codec, the token service, and the pipeline's credential cache. */
function side(cache: RequestCache) {
  const deps: AuthDeps = {
    sessionTokens: createSessionTokenCodec(SECRET, cache, clock),
    auth: t.app.services.auth,
    apiTokens: createApiTokenService(t.app.store, now, cache, 'development'),
  }
  return { deps, credentials: createCredentialCache(deps, cache) }
}

/** The principal, or the refusal, as a comparable value. */
async function settle(answer: () => unknown): Promise<unknown> {
  try {
    return { principal: await answer() }
  } catch (err) {
    return { refused: err instanceof Error ? `${err.constructor.name} ${err.message}` : String(err) }
  }
}

beforeAll(async () => {
  t = await createTestApp({}, { now })
  expect((await t.req('PUT', '/api/environments/staging', { token: t.adminToken, body: {} })).status).toBe(201)
  users = []
  for (const flagPrefixes of [[], ['mobile/']]) {
    const username = `person${users.length}`
    const password = `${username}-password`
    const made = await t.app.services.users.create(SYSTEM, { username, password, permissions: ['flag:read'], flagPrefixes })
    users.push({ id: made.id, username, password })
  }
})
afterAll(async () => {
  await t?.close()
})

type Step =
  | { kind: 'ask'; who: number; header: 'authorization' | 'x-api-key' | 'both' }
  | { kind: 'tick'; ms: number }
  | { kind: 'grant'; user: number; permissions: readonly string[]; flagPrefixes: readonly string[] }
  | { kind: 'logout'; who: number }
  | { kind: 'revoke'; who: number }

// credentials 0-1: sessions of users 0-1; 2-4: API tokens (unconfined; web/ in staging; expiring soon)
const CREDENTIALS = 5
const steps: fc.Arbitrary<Step> = fc.oneof(
  {
    arbitrary: fc.record({
      kind: fc.constant('ask' as const),
      who: fc.integer({ min: 0, max: CREDENTIALS - 1 }),
      header: fc.constantFrom('authorization' as const, 'x-api-key' as const, 'both' as const),
    }),
    weight: 6,
  },
  { arbitrary: fc.record({ kind: fc.constant('tick' as const), ms: fc.integer({ min: 100, max: 2500 }) }), weight: 2 },
  {
    arbitrary: fc.record({
      kind: fc.constant('grant' as const),
      user: fc.integer({ min: 0, max: 1 }),
      permissions: fc.constantFrom(['flag:read'], ['flag:read@staging'], ['flag:read', 'flag:write@development'], []),
      flagPrefixes: fc.constantFrom([], ['mobile/'], ['web/', 'zzz/']),
    }),
    weight: 2,
  },
  { arbitrary: fc.record({ kind: fc.constant('logout' as const), who: fc.integer({ min: 0, max: 1 }) }), weight: 1 },
  { arbitrary: fc.record({ kind: fc.constant('revoke' as const), who: fc.integer({ min: 2, max: CREDENTIALS - 1 }) }), weight: 1 },
)

/** Fresh credentials for one sequence: two sessions and three API tokens. */
async function freshCredentials() {
  const signer = createSessionTokenCodec(SECRET, new RequestCache(1 << 20), clock)
  const sessions: { id: string; secret: string }[] = []
  for (const u of users) {
    const { session, issuedAt } = await t.app.services.auth.login(u.username, u.password, '127.0.0.1', 'test')
    sessions.push({ id: session.id, secret: await signer.sign(u.id, session.id, issuedAt, new Date(session.expiresAt)) })
  }
  const tokens: { id: string; secret: string }[] = []
  const bodies = [
    { permissions: ['flag:read'] },
    { permissions: ['flag:read@staging'], flagPrefixes: ['web/'], environment: 'staging' },
    { permissions: ['flag:evaluate'], expiresAt: new Date(current + 2000).toISOString() },
  ]
  for (const body of bodies) {
    const made = await t.app.services.apiTokens.create(SYSTEM, { name: `tok-${++tokensMade}`, ...body })
    tokens.push({ id: made.id, secret: made.token })
  }
  return [...sessions, ...tokens]
}

test('the cached authentication answers as the whole one with nothing kept, across changes and time', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(steps, { minLength: 1, maxLength: 14 }), async (sequence) => {
      const credentials = await freshCredentials()
      const cached = side(new RequestCache(64 * 1024))
      for (const step of sequence) {
        const credential = credentials[step.kind === 'grant' ? step.user : step.kind === 'tick' ? 0 : step.who] as {
          id: string
          secret: string
        }
        if (step.kind === 'tick') current += step.ms
        else if (step.kind === 'grant')
          await t.app.services.users.update(SYSTEM, (users[step.user] as { id: string }).id, {
            permissions: step.permissions,
            flagPrefixes: step.flagPrefixes,
          })
        else if (step.kind === 'logout') await t.app.services.sessions.remove(SYSTEM, credential.id).catch(() => {})
        else if (step.kind === 'revoke') await t.app.services.apiTokens.revoke(SYSTEM, credential.id).catch(() => {})
        else {
          const headers = new Headers()
          if (step.header !== 'x-api-key') headers.set('authorization', `Bearer ${credential.secret}`)
          if (step.header !== 'authorization') headers.set('x-api-key', credential.secret)
          const plain = side(new RequestCache(1 << 20))
          const want = await settle(() => authenticate(plain.deps, headers))
          // as the pipeline asks: what is known from memory, else the whole way; twice, so the second is a kept one
          for (let i = 0; i < 2; i++)
            expect(await settle(() => cached.credentials.principal(headers) ?? authenticate(cached.deps, headers))).toEqual(want)
        }
      }
    }),
    {
      numRuns: 40,
      // besides the random ones: a token asked across its expiry, a user asked across a change of grants
      examples: [
        [
          [
            { kind: 'ask', who: 4, header: 'authorization' },
            { kind: 'tick', ms: 2500 },
            { kind: 'ask', who: 4, header: 'authorization' },
          ],
        ],
        [
          [
            { kind: 'ask', who: 1, header: 'authorization' },
            { kind: 'grant', user: 1, permissions: ['flag:read@staging'], flagPrefixes: ['web/', 'zzz/'] },
            { kind: 'ask', who: 1, header: 'authorization' },
          ],
        ],
      ],
    },
  )
})
