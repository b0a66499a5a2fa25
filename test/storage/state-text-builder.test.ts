/**
 * The state file's text built from each batch's changes must be byte for byte the text built whole:
 * random batches of inserts, replacements and deletes over flags and users (and touched sessions),
 * applied through the store's own drafts, compared after every batch. The store writes the pieces
 * through `StateBytes`, so that path is held to the same text, non-ASCII values included.
 */

import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { Draft, DraftTx, emptyStateData, type StateData } from '../../src/storage/memory-state.ts'
import { StateBytes } from '../../src/storage/state-file-encoder.ts'
import { serializeState } from '../../src/storage/state-file-format.ts'
import { StateText } from '../../src/storage/state-text-builder.ts'
import type { Change, Rows } from '../../src/storage/store.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'

type Op = { kind: 'put' | 'delete'; table: 'flags' | 'users'; key: number; value: number } | { kind: 'touch'; key: number; value: number }

const op: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constantFrom('put' as const, 'put' as const, 'delete' as const),
    table: fc.constantFrom('flags' as const, 'users' as const),
    key: fc.nat(12),
    value: fc.nat(1000),
  }),
  fc.record({ kind: fc.constant('touch' as const), key: fc.nat(3), value: fc.nat(59) }),
)

const at = '2026-11-22T10:15:00.000Z'
function user(key: number, value: number): Rows['users'] {
  return {
    id: `usr_${key}`,
    username: `user${key}`,
    passwordHash: `hash-${value}`,
    permissions: ['flag:read'],
    createdAt: at,
    updatedAt: at,
  }
}
function session(key: number): Rows['sessions'] {
  return { id: `ses_${key}`, userId: 'usr_0', createdAt: at, expiresAt: '2026-11-23T10:15:00.000Z', lastUsedAt: at }
}

/** Applies one batch of operations as one draft of transactions; answers the new state and its changes. */
function applyBatch(base: StateData, ops: Op[]): { data: StateData; changes: Change[] } {
  const draft = new Draft(base)
  const changes: Change[] = []
  for (const o of ops) {
    if (o.kind === 'touch') continue
    const tx = new DraftTx(draft)
    const id = o.table === 'flags' ? `flg_f${o.key}` : `usr_${o.key}`
    if (o.kind === 'delete') tx.delete(o.table, id)
    // every third value has characters beyond ASCII (2, 3 and 4 bytes in UTF-8)
    else if (o.table === 'flags')
      tx.put('flags', { ...sampleFlag(`f${o.key}`, o.value % 3 === 0 ? `v${o.value}-é✓😀` : `v${o.value}`), revision: o.value + 1 })
    else tx.put('users', user(o.key, o.value))
    changes.push(...tx.finish())
  }
  return { data: draft.seal(), changes }
}

test('the text built from changes equals the text built whole, after every batch', () => {
  fc.assert(
    fc.property(fc.array(fc.array(op, { maxLength: 8 }), { minLength: 1, maxLength: 25 }), (batches) => {
      const text = new StateText()
      const bytes = new StateBytes()
      let data = emptyStateData()
      // a few sessions whose last use moves outside of commits
      const seeded = new Draft(data)
      for (let k = 0; k < 4; k++) seeded.set('sessions', session(k))
      data = seeded.seal()
      const touched = new Map<string, string>()
      const lastUsed = (table: string, id: string) => (table === 'sessions' ? touched.get(id) : undefined)
      expect(text.of(data, lastUsed)).toBe(serializeState(data, lastUsed))
      for (const ops of batches) {
        for (const o of ops)
          if (o.kind === 'touch') touched.set(`ses_${o.key}`, `2026-11-22T11:${String(o.value).padStart(2, '0')}:00.000Z`)
        const next = applyBatch(data, ops)
        data = next.data
        // as the store writes it: the pieces, encoded into the reused buffer
        const incremental = new TextDecoder().decode(bytes.encode(text.pieces(data, lastUsed, next.changes)))
        expect(incremental).toBe(serializeState(data, lastUsed))
        JSON.parse(incremental)
      }
    }),
    { numRuns: 300 },
  )
})

test('replacing rows reuses the members of unchanged rows and of unchanged tables', () => {
  const text = new StateText()
  const first = applyBatch(
    emptyStateData(),
    [0, 1, 2].map((key) => ({ kind: 'put' as const, table: 'flags' as const, key, value: 1 })),
  )
  const before = text.of(first.data, () => undefined, first.changes)
  const second = applyBatch(first.data, [{ kind: 'put', table: 'flags', key: 1, value: 7 }])
  const after = text.of(second.data, () => undefined, second.changes)
  const parsed = JSON.parse(after)
  expect(Object.keys(parsed.flags)).toEqual(['flg_f0', 'flg_f1', 'flg_f2'])
  expect(parsed.flags.flg_f1.defaultValue).toBe('v7')
  expect(JSON.parse(before).flags.flg_f1.defaultValue).toBe('v1')
  expect(after).toBe(serializeState(second.data, () => undefined))
})

test('the bytes grow past the first buffer and stay the UTF-8 of the text, from write to write', () => {
  const bytes = new StateBytes()
  const member = (i: number) => `"k${i}":"${'é✓😀x'.repeat(40)}"` // about 400 bytes of mixed widths
  for (const count of [10, 400, 3]) {
    const members = Array.from({ length: count }, (_, i) => member(i))
    const pieces = ['{"t":{', members, '}}']
    const text = `{"t":{${members.join(',')}}}`
    const encoded = bytes.encode(pieces)
    expect(Buffer.from(encoded).equals(Buffer.from(text, 'utf8'))).toBe(true)
    expect(encoded.length).toBe(Buffer.byteLength(text))
  }
})
