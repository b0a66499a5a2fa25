/**
 * The flag change feed (docs/environments.md): a change replayed from the audit log for a client
 * resuming with `Last-Event-ID` names the same environments as the live change did, so a reader of
 * one environment is never replayed another environment's change.
 */

import { expect, test } from 'bun:test'
import { createEnvironmentService } from '../../src/services/environment-service.ts'
import { createFlagChangeFeed, type FlagChange } from '../../src/services/flag-change-feed.ts'
import { createFlagService } from '../../src/services/flag-service.ts'
import { tempFileStores } from '../helpers/temp-store.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const stores = tempFileStores()
const now = () => new Date('2026-12-07T09:00:00Z')

test('replayed changes carry the environments the live changes carried', async () => {
  const store = await stores.open()
  const environments = createEnvironmentService(store, 'production', now)
  await environments.ensureDefault(SYSTEM)
  await environments.put(SYSTEM, 'staging', {})
  const flags = createFlagService(store, 1000, now, 'production')
  const feed = createFlagChangeFeed(store)
  const start = feed.delivered
  const live: FlagChange[] = []
  feed.subscribe((batch) => live.push(...batch.changes))
  await flags.create(SYSTEM, { name: 'secret/x', type: 'BOOLEAN' })
  await flags.update(SYSTEM, 'secret/x', { value: true }, undefined, undefined, 'production')
  await flags.update(SYSTEM, 'secret/x', { value: false }, undefined, undefined, 'staging')
  await flags.update(SYSTEM, 'secret/x', { description: 'shared' }, undefined, undefined, 'staging')
  await flags.update(SYSTEM, 'secret/x', { description: 'both', value: true }, undefined, undefined, 'staging')
  const replayed = await feed.page(start, feed.delivered)
  const environmentsOf = (changes: FlagChange[]) => changes.map((c) => c.environments?.toSorted())
  expect(environmentsOf(live)).toEqual([undefined, ['production'], ['staging'], ['production', 'staging'], ['production', 'staging']])
  expect(replayed.map((c) => c.id)).toEqual(live.map((c) => c.id))
  const seenBy = (changes: FlagChange[], env: string) =>
    changes.filter((c) => c.environments === undefined || c.environments.includes(env)).map((c) => c.id)
  for (const env of ['production', 'staging']) expect(seenBy(replayed, env)).toEqual(seenBy(live, env))
  expect(seenBy(replayed, 'staging')).not.toContain(live[1]?.id)
  feed.close()
})
