/**
 * The setting of the change-control service tests: an in-process app whose environments are
 * development (default), staging, production (protected, 1 approval) and eu (protected, 2
 * approvals), with the flags a test seeds before protection is set, and callers as people.
 */

import { afterEach } from 'bun:test'
import type { Caller, Principal } from '../../src/domain/principal.ts'
import type { Services } from '../../src/services/services.ts'
import { createTestApp, SYSTEM, type TestApp } from './test-app.ts'

/** A signed-in person with `permissions` (confined to `flagPrefixes` when given). */
export const person = (id: string, permissions: string[], flagPrefixes: string[] = []): Caller => ({
  principal: { kind: 'user', userId: id, username: id, sessionId: `ses_${id}`, permissions, flagPrefixes } as Principal,
  requestId: `req_${id}`,
})

/** Registers the clean-up and answers a maker of worlds: `seed` writes flags before production and eu are protected. */
export function protectedWorlds(seed: (s: Services) => Promise<void>): () => Promise<Services> {
  const apps: TestApp[] = []
  afterEach(async () => {
    for (const a of apps.splice(0)) await a.close()
  })
  return async () => {
    const a = await createTestApp({ FLAGD_ENVIRONMENT: 'development' })
    apps.push(a)
    const s = a.app.services
    for (const env of ['staging', 'production', 'eu']) await s.environments.put(SYSTEM, env, {})
    await seed(s)
    await s.environments.put(SYSTEM, 'production', { protected: true, requiredApprovals: 1 })
    await s.environments.put(SYSTEM, 'eu', { protected: true, requiredApprovals: 2 })
    return s
  }
}
