/**
 * Memory that goes back (docs/performance.md#memory-that-goes-back): what a use case made for one
 * request is released once it has answered, so a large import or a large bulk answer does not stay
 * resident until the next one. Each test keeps only a weak reference to what it checks and waits
 * for the collector to report it gone (a full collection per look; conservative stack scanning may
 * need a few looks).
 */

import { expect, test } from 'bun:test'
import type { Services } from '../../src/services/services.ts'
import { eventually } from '../helpers/eventually.ts'
import { tempServices, userCaller } from '../helpers/temp-services.ts'

const worlds = tempServices()
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'flag:evaluate', 'migration:read', 'migration:write'])

/** A migration document of `n` INTEGER flags named `<prefix>/fI`. */
const documentOf = (n: number, prefix: string) => ({
  environment: 'test',
  version: '1.0.0',
  createdAt: '2026-12-01T09:00:00.000Z',
  flags: Object.fromEntries(
    Array.from({ length: n }, (_, i) => [`${prefix}/f${i}`, { type: 'INTEGER', defaultValue: 0, valueExists: true, value: i }]),
  ),
})

/** Resolves once `ref`'s object has been collected; fails the test when it never is. */
async function collected(ref: WeakRef<object>, what: string): Promise<void> {
  await eventually(
    () => {
      Bun.gc(true)
      return ref.deref() === undefined
    },
    { within: 3000, what: () => `${what} was never released` },
  )
}

/** Imports `n` flags under `prefix` and answers a weak reference to the import's result, which the caller has then dropped. */
async function importedResult(s: Services, n: number, prefix: string): Promise<WeakRef<object>> {
  const result = await s.migrations.importDocument(
    admin,
    documentOf(n, prefix),
    { mode: 'merge', values: 'overwrite', dryRun: false },
    'import-upload',
  )
  expect(result.summary.created).toBe(n)
  return new WeakRef(result)
}

test("an import's result (its list of changes) is released once answered, not kept until the next import", async () => {
  const { s } = await worlds.open()
  await importedResult(s, 1, 'first')
  const ref = await importedResult(s, 500, 'big')
  await collected(ref, 'the result of the last import')
})
