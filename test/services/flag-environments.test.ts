/**
 * Flag writes in an environment (docs/environments.md#flags-in-an-environment): a delete takes the
 * flag as a whole, from every environment, and the environment named must exist, else nothing is
 * deleted; a value set in one environment leaves the others' states as they were.
 */

import { expect, test } from 'bun:test'
import { NotFoundError } from '../../src/domain/errors.ts'
import { createEnvironmentService } from '../../src/services/environment-service.ts'
import { createFlagService } from '../../src/services/flag-service.ts'
import { tempFileStores } from '../helpers/temp-store.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const stores = tempFileStores()
const now = () => new Date('2026-11-27T12:00:00Z')

async function twoEnvironments() {
  const store = await stores.open()
  const environments = createEnvironmentService(store, 'development', now)
  await environments.ensureDefault(SYSTEM)
  await environments.put(SYSTEM, 'staging', {})
  const flags = createFlagService(store, 1000, now, 'development')
  await flags.create(SYSTEM, { name: 'web/old', type: 'BOOLEAN', value: true })
  return { store, flags }
}

test('removing with an environment named deletes the flag from every environment', async () => {
  const { store, flags } = await twoEnvironments()
  await flags.remove(SYSTEM, 'web/old', undefined, 'staging')
  expect(store.committed().flags.has('web/old')).toBe(false)
  expect(() => flags.get(SYSTEM.principal, 'web/old', 'development')).toThrow(NotFoundError)
})

test('an unknown environment is 404 and deletes nothing', async () => {
  const { store, flags } = await twoEnvironments()
  const before = store.committed().revisionOf('flags')
  await expect(flags.remove(SYSTEM, 'web/old', undefined, 'nowhere')).rejects.toThrow('no environment named "nowhere"')
  expect(store.committed().flags.has('web/old')).toBe(true)
  expect(store.committed().revisionOf('flags')).toBe(before)
})

test('a value set in one environment leaves another that has none as it was', async () => {
  const store = await stores.open()
  const environments = createEnvironmentService(store, 'development', now)
  await environments.ensureDefault(SYSTEM)
  const flags = createFlagService(store, 1000, now, 'development')
  await flags.create(SYSTEM, { name: 'f', type: 'BOOLEAN' })
  await environments.put(SYSTEM, 'staging', {})
  expect((await flags.update(SYSTEM, 'f', { value: true })).value).toBe(true)
  expect(flags.get(SYSTEM.principal, 'f', 'staging')).toMatchObject({ valueExists: false })
  expect((await flags.update(SYSTEM, 'f', { value: false }, undefined, undefined, 'staging')).value).toBe(false)
  expect(flags.get(SYSTEM.principal, 'f')).toMatchObject({ valueExists: true, value: true })
})
