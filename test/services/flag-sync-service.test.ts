/**
 * Who may receive flags over the sync protocol (docs/openfeature.md#in-process): a token made on
 * another replica a moment ago is admitted after the store catches up once, as HTTP admits it; a
 * token that stays unknown is refused after that one catch-up.
 */

import { expect, test } from 'bun:test'
import { UnauthorizedError } from '../../src/domain/errors.ts'
import type { TokenPrincipal } from '../../src/domain/principal.ts'
import { RequestCache } from '../../src/domain/request-cache.ts'
import type { ApiTokenService } from '../../src/services/api-token-service.ts'
import type { FlagChangeFeed } from '../../src/services/flag-change-feed.ts'
import { createFlagSyncService } from '../../src/services/flag-sync-service.ts'
import type { Store } from '../../src/storage/store.ts'

function replicaBehind() {
  const principal: TokenPrincipal = { kind: 'token', tokenId: 'tok_1', name: 'svc', permissions: ['flag:evaluate'], flagPrefixes: [] }
  const state = { caughtUp: false, refreshes: 0 }
  const store = {
    async refresh() {
      state.refreshes++
      state.caughtUp = true
    },
  } as unknown as Store
  const apiTokens = {
    authenticate(secret: string) {
      if (secret !== 'fdt_new' || !state.caughtUp) throw new UnauthorizedError('invalid or revoked API token')
      return principal
    },
  } as unknown as ApiTokenService
  const sync = createFlagSyncService({
    store,
    apiTokens,
    changeFeed: {} as FlagChangeFeed,
    environment: 'test',
    cache: new RequestCache(1 << 20),
  })
  return { sync, state, principal }
}

test('a token this replica has not seen yet is admitted once the store has caught up', async () => {
  const { sync, state, principal } = replicaBehind()
  expect(await sync.callerOf('fdt_new')).toEqual({ kind: 'token', principal })
  expect(state.refreshes).toBe(1)
  expect(await sync.callerOf('fdt_new')).toEqual({ kind: 'token', principal }) // known now: no catch-up
  expect(state.refreshes).toBe(1)
})

test('a token unknown after catching up is refused; no credential is anonymous', async () => {
  const { sync, state } = replicaBehind()
  await expect(Promise.resolve(sync.callerOf('fdt_other'))).rejects.toThrow('invalid or revoked API token')
  expect(state.refreshes).toBe(1)
  expect(await sync.callerOf(undefined)).toEqual({ kind: 'anonymous' })
})
