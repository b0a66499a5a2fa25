/**
 * The flag read model's cached texts (src/services/flag-read-model.ts): a read answers with the
 * JSON and ETag made once per stored row, and a changed flag gets new ones.
 */

import { expect, test } from 'bun:test'
import { createFlagService } from '../../src/services/flag-service.ts'
import { tempFileStores } from '../helpers/temp-store.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const stores = tempFileStores()
const flagService = async () => createFlagService(await stores.open(), 1000, () => new Date('2026-12-01T00:00:00Z'), 'development')

test('text() is the resource as JSON with the ETag of its revision, made once per stored row', async () => {
  const flags = await flagService()
  const created = await flags.create(SYSTEM, { name: 'app/on', type: 'BOOLEAN', value: true })
  const text = flags.read.text(created)
  expect(JSON.parse(text.json)).toMatchObject({ name: 'app/on', type: 'BOOLEAN', value: true, revision: 1 })
  expect(text.etag).toBe('"1"')
  expect(text.json).toBe(flags.read.json(created))
  expect(flags.read.text(flags.get(SYSTEM.principal, 'app/on'))).toBe(text) // the same row: the same texts

  const updated = await flags.update(SYSTEM, 'app/on', { value: false })
  const next = flags.read.text(updated)
  expect(next).not.toBe(text)
  expect(next.etag).toBe('"2"')
  expect(JSON.parse(next.json)).toMatchObject({ value: false, revision: 2 })
})
