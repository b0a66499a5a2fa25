/**
 * A flag's audit entry names the environment whose state its change moved (docs/environments.md#audit):
 * any created or deleted flag's, an update's only when that state changed. Deciding it for a created
 * flag costs nothing: its state is not serialised (docs/performance.md#imports).
 */

import { expect, test } from 'bun:test'
import { auditEntriesOf } from '../../src/domain/audit-entry.ts'
import type { FlagRow } from '../../src/domain/flag-row.ts'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'

const context = { principal: systemPrincipal('cli'), source: 'cli', requestId: 'audit', environment: 'development' }
const at = '2026-12-07T10:00:00.000Z'

/** A state value that counts how many times it is serialised. */
class Counted {
  static calls = 0
  toJSON() {
    Counted.calls++
    return 'counted'
  }
}

const withValue = (row: FlagRow, value: unknown): FlagRow => ({ ...row, states: { development: { valueExists: true, value } } }) as FlagRow

test('a created or deleted flag moved its environment, and its state is not serialised to say so', () => {
  const row = withValue(sampleFlag('a'), new Counted())
  Counted.calls = 0
  const [created] = auditEntriesOf(context, at, [{ seq: 1, table: 'flags', id: row.id, before: null, after: row }])
  const [deleted] = auditEntriesOf(context, at, [{ seq: 2, table: 'flags', id: row.id, before: row, after: null }])
  expect(created?.entry.environment).toBe('development')
  expect(deleted?.entry.environment).toBe('development')
  expect(Counted.calls).toBe(0)
})

test("an update moved its environment only when that environment's state changed", () => {
  const before = withValue(sampleFlag('a'), 'x')
  const valueChanged = { ...withValue(before, 'y'), revision: 2 }
  const describedOnly = { ...before, description: 'now described', revision: 2 }
  const [moved] = auditEntriesOf(context, at, [{ seq: 1, table: 'flags', id: before.id, before, after: valueChanged }])
  const [shared] = auditEntriesOf(context, at, [{ seq: 2, table: 'flags', id: before.id, before, after: describedOnly }])
  expect(moved?.entry.environment).toBe('development')
  expect(shared?.entry.environment).toBeNull()
})
