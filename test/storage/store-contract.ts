/**
 * The store contract (`src/storage/store.ts`) as a test suite that any implementation runs:
 * `describeStoreContract(name, harness)`. It talks to the interface only: committed visibility,
 * compare-and-swap, the change feed's order and content, per-table revisions, rollback on failure,
 * concurrent transactions, durability across reopening, backups in the commit, `writable` after a
 * failed write, `flush`, and `refresh`.
 */

import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { StoredToken } from '../../src/domain/api-token.ts'
import { systemPrincipal } from '../../src/domain/principal.ts'
import type { StoredSession } from '../../src/domain/session.ts'
import type { StoredUser } from '../../src/domain/user.ts'
import type { Commit, CommitMeta, Store } from '../../src/storage/store.ts'
import { sampleEnvironment } from '../helpers/sample-environment.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'

/** How the suite gets stores: `open()` (re)opens the same storage; `dataDir` holds its backups. */
export interface StoreHarness {
  dataDir: string
  open(): Promise<Store>
  /** Removes everything the harness made. */
  destroy(): Promise<void>
  /**
   * Makes every write from now on fail as a full disk would, when the store can be made to (the
   * file store's writer); a store that recovers by itself (PostgreSQL) is tested for that elsewhere.
   */
  failWrites?: () => void
  /** A second store on the same storage, as another replica would open it, where replicas exist. */
  replica?: () => Promise<Store>
}

const meta: CommitMeta = { principal: systemPrincipal('cli'), source: 'cli', requestId: 'req-1' }
const user = (id: string): StoredUser => ({
  id,
  username: id,
  passwordHash: 'x',
  permissions: [],
  createdAt: '2026-11-22T10:00:00.000Z',
  updatedAt: '2026-11-22T10:00:00.000Z',
})
const session = (id: string): StoredSession => ({
  id,
  userId: 'u1',
  createdAt: '2026-11-22T10:00:00.000Z',
  expiresAt: '2099-01-01T00:00:00.000Z',
  lastUsedAt: '2026-11-22T10:00:00.000Z',
})

/**
 * Registers the contract tests for one implementation. `can` says which optional hooks its harness
 * has, so a test that needs one is reported skipped where it cannot run, never passed empty.
 */
export function describeStoreContract(
  name: string,
  makeHarness: () => Promise<StoreHarness>,
  can: { failWrites?: boolean; replicas?: boolean } = {},
): void {
  describe(`store contract: ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = []
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })
    async function fresh(): Promise<{ store: Store; harness: StoreHarness; reopen(): Promise<Store> }> {
      const harness = await makeHarness()
      let store = await harness.open()
      cleanups.push(async () => {
        await store.close()
        await harness.destroy()
      })
      return {
        store,
        harness,
        async reopen() {
          await store.close()
          store = await harness.open()
          return store
        },
      }
    }

    test('a new store is empty at revision 0', async () => {
      const { store } = await fresh()
      const s = store.committed()
      expect([s.revision, s.revisionOf('flags'), s.flags.size, s.users.size, s.sessions.size, s.tokens.size]).toEqual([0, 0, 0, 0, 0, 0])
      expect(store.writable).toBe(true)
    })

    test('a change is visible to readers only once it is durable, with numbered changes', async () => {
      const { store } = await fresh()
      const pending = store.transact(meta, (tx) => {
        tx.put('flags', sampleFlag('a'))
        expect(tx.read.flags.get('a')?.name).toBe('a') // the transaction sees its own change
        return 'done'
      })
      expect(store.committed().flags.has('a')).toBe(false)
      const out = await pending
      expect(out.result).toBe('done')
      expect(out.changes).toEqual([{ seq: 1, table: 'flags', id: 'flg_a', before: null, after: sampleFlag('a') }])
      expect(out.revision).toBe(1)
      expect(store.committed().flags.get('a')).toEqual(sampleFlag('a'))
      expect(store.committed().row('flags', 'flg_a')?.name).toBe('a')
    })

    test('per-table revisions: a session change does not move the flags revision', async () => {
      const { store } = await fresh()
      await store.transact(meta, (tx) => tx.put('flags', sampleFlag('a')))
      await store.transact(meta, (tx) => {
        tx.put('users', user('u1'))
        tx.put('sessions', session('s1'))
      })
      const s = store.committed()
      expect([s.revision, s.revisionOf('flags'), s.revisionOf('users'), s.revisionOf('sessions'), s.revisionOf('tokens')]).toEqual([
        3, 1, 2, 3, 0,
      ])
    })

    test('segments: by name, their own revision, their rules for $ref, and they survive a reopen', async () => {
      const { store, reopen } = await fresh()
      const segment = {
        id: 'seg_a',
        name: 'beta',
        description: 'Beta testers',
        rule: { in: [{ var: 'plan' }, ['beta']] },
        createdAt: '2026-11-25T00:00:00.000Z',
        updatedAt: '2026-11-25T00:00:00.000Z',
        revision: 1,
      }
      await store.transact(meta, (tx) => tx.put('flags', sampleFlag('a')))
      const out = await store.transact(meta, (tx) => tx.put('segments', segment))
      expect(out.changes).toEqual([{ seq: 2, table: 'segments', id: 'seg_a', before: null, after: segment }])
      const s = store.committed()
      expect([s.revisionOf('flags'), s.revisionOf('segments')]).toEqual([1, 2])
      expect(s.segments.get('beta')).toEqual(segment)
      expect(s.segmentRules().get('beta')).toEqual(segment.rule)
      const again = await reopen()
      expect(again.committed().segments.get('beta')).toEqual(segment)
      expect(again.committed().revisionOf('segments')).toBe(2)
      await again.transact(meta, (tx) => tx.delete('segments', 'seg_a'))
      expect(again.committed().segments.size).toBe(0)
      const [entry] = await again.audit.query({ limit: 1 })
      expect(entry).toMatchObject({ action: 'segment.deleted', target: { type: 'segment', name: 'beta' } })
    })

    test('environments: by name, their own revision and colour, a flag row with states per environment, all surviving a reopen', async () => {
      const { store, reopen } = await fresh()
      const env = (name: string, extra: Record<string, unknown> = {}) => ({
        ...sampleEnvironment(name, {}, '2026-11-27T00:00:00.000Z'),
        ...extra,
      })
      await store.transact(meta, (tx) => {
        tx.put('environments', env('development', { home: true as const }))
        tx.put('environments', env('production', { protected: true, requiredApprovals: 1, color: 'hsl(0, 70%, 40%)' }))
      })
      // a flag made while production is protected starts there disabled, with no value (the store refuses more)
      const flag = { ...sampleFlag('a'), states: { production: { valueExists: false, enabled: false } } }
      await store.transact(meta, (tx) => tx.put('flags', flag))
      const s = store.committed()
      expect([s.revisionOf('environments'), s.revisionOf('flags')]).toEqual([2, 3])
      expect([...s.environments.keys()]).toEqual(['development', 'production'])
      expect(s.environments.get('production')?.requiredApprovals).toBe(1)
      const again = await reopen()
      // its own colour is stored with it (docs/api.md#environment-colours)
      expect(again.committed().environments.get('production')?.color).toBe('hsl(0, 70%, 40%)')
      expect([...again.committed().environments.values()]).toEqual([...s.environments.values()])
      expect(again.committed().flags.get('a')).toEqual(flag)
      expect(again.committed().revisionOf('environments')).toBe(2)
      await again.transact(meta, (tx) => tx.delete('environments', 'production'))
      expect([...again.committed().environments.keys()]).toEqual(['development'])
    })

    test('segments: 30 concurrent writers that each read the index first all land, once each, and stay after a reopen', async () => {
      const { store, reopen } = await fresh()
      const segment = (name: string, revision = 1) => ({
        id: `seg_${name}_${revision}`,
        name,
        description: '',
        rule: { '==': [{ var: 'n' }, name] },
        createdAt: '2026-11-25T00:00:00.000Z',
        updatedAt: '2026-11-25T00:00:00.000Z',
        revision,
      })
      // each does what the segment service does: look the name up, then insert (the lookup built a
      // name index in the same batch that the next insert then changed under it)
      const outs = await Promise.all(
        Array.from({ length: 30 }, (_, i) =>
          store.transact(meta, (tx) => {
            const existed = tx.read.segments.has(`cc${i}`)
            expect(tx.read.segmentRules().has(`cc${i}`)).toBe(false)
            tx.put('segments', segment(`cc${i}`))
            expect(tx.read.segments.get(`cc${i}`)?.id).toBe(`seg_cc${i}_1`) // sees its own insert
            expect(tx.read.segmentRules().has(`cc${i}`)).toBe(true)
            return existed
          }),
        ),
      )
      expect(outs.map((o) => o.result)).toEqual(Array(30).fill(false))
      const names = () => [...store.committed().segments.keys()].sort()
      const expected = Array.from({ length: 30 }, (_, i) => `cc${i}`).sort()
      expect(names()).toEqual(expected)
      expect(store.committed().segmentRules().size).toBe(30)
      // a second write of one name finds the row and replaces it
      const second = await store.transact(meta, (tx) => {
        const current = tx.read.segments.get('cc7')
        tx.put('segments', { ...(current ?? segment('cc7')), description: 'again', revision: 2 })
        return current?.id
      })
      expect(second.result).toBe('seg_cc7_1')
      const again = await reopen()
      expect([...again.committed().segments.keys()].sort()).toEqual(expected)
      expect(again.committed().segments.get('cc7')?.description).toBe('again')
      expect(again.committed().shadowedSegments()).toEqual([])
      await again.transact(meta, (tx) => tx.delete('segments', 'seg_cc7_1'))
      const third = await reopen()
      expect(third.committed().segments.has('cc7')).toBe(false)
      expect(third.committed().segments.size).toBe(29)
    })

    test('segments: a rename in one transaction frees the old name at once, and a failed transaction restores the index', async () => {
      const { store } = await fresh()
      const base = { description: '', rule: { '==': [1, 1] }, createdAt: 'x', updatedAt: 'x', revision: 1 }
      await store.transact(meta, (tx) => tx.put('segments', { ...base, id: 'seg_1', name: 'a' }))
      expect(() =>
        store.transact(meta, (tx) => {
          tx.put('segments', { ...base, id: 'seg_1', name: 'b', revision: 2 })
          expect([...tx.read.segments.keys()]).toEqual(['b'])
          throw new Error('no')
        }),
      ).toThrow('no')
      expect([...store.committed().segments.keys()]).toEqual(['a'])
      await store.transact(meta, (tx) => tx.put('segments', { ...base, id: 'seg_2', name: 'b' }))
      expect([...store.committed().segments.keys()].sort()).toEqual(['a', 'b'])
      expect(store.committed().segmentRules().size).toBe(2)
    })

    test('work that throws changes nothing, and the store goes on', async () => {
      const { store } = await fresh()
      await store.transact(meta, (tx) => tx.put('flags', sampleFlag('keep')))
      await expect(
        store.transact(meta, (tx) => {
          tx.put('flags', sampleFlag('lost'))
          tx.delete('flags', 'flg_keep')
          throw new Error('refused')
        }),
      ).rejects.toThrow('refused')
      expect([...store.committed().flags.keys()]).toEqual(['keep'])
      const later = await store.transact(meta, (tx) => tx.put('flags', sampleFlag('later')))
      expect(later.changes.map((c) => c.seq)).toEqual([2])
      expect(later.changes[0]?.before).toBeNull()
    })

    test('a rename keeps the id and is one change; names stay unique', async () => {
      const { store } = await fresh()
      await store.transact(meta, (tx) => tx.put('flags', sampleFlag('old')))
      const renamed = { ...sampleFlag('old'), name: 'new', revision: 2 }
      const out = await store.transact(meta, (tx) => tx.put('flags', renamed))
      expect(out.changes).toEqual([{ seq: 2, table: 'flags', id: 'flg_old', before: sampleFlag('old'), after: renamed }])
      expect([...store.committed().flags.keys()]).toEqual(['new'])
      await expect(store.transact(meta, (tx) => tx.put('flags', { ...sampleFlag('other'), name: 'new' }))).rejects.toThrow()
      expect(store.committed().flags.get('new')?.id).toBe('flg_old')
    })

    test('expect is a compare-and-swap: of 8 racing writers with one revision, exactly one wins', async () => {
      const { store } = await fresh()
      await store.transact(meta, (tx) => tx.put('flags', sampleFlag('a')))
      const results = await Promise.allSettled(
        Array.from({ length: 8 }, (_, i) =>
          store.transact(meta, (tx) => {
            tx.expect('flags', 'flg_a', 1, 'flag a')
            tx.put('flags', sampleFlag('a', `writer ${i}`, 2))
          }),
        ),
      )
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1)
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected')
      expect(refused.map((r) => r.reason.code)).toEqual(Array(7).fill('PRECONDITION_FAILED'))
      expect(store.committed().flags.get('a')?.revision).toBe(2)
      await expect(store.transact(meta, (tx) => tx.expect('flags', 'flg_gone', 1, 'flag gone'))).rejects.toMatchObject({
        code: 'PRECONDITION_FAILED',
      })
    })

    test('listeners hear each transaction once durable, in order, with meta and rows', async () => {
      const { store } = await fresh()
      const heard: { commit: Commit; visible: boolean }[] = []
      const stop = store.onCommit((commit) =>
        heard.push({ commit, visible: store.committed().revision >= (commit.changes.at(-1)?.seq ?? 0) }),
      )
      await Promise.all([
        store.transact(meta, (tx) => tx.put('flags', sampleFlag('a'))),
        store.transact({ ...meta, requestId: 'req-2', source: 'api' }, (tx) => tx.put('flags', sampleFlag('b'))),
      ])
      await store.transact(meta, (tx) => tx.delete('flags', 'flg_a'))
      await store.transact(meta, () => 'nothing changes') // no event for a transaction without changes
      stop()
      await store.transact(meta, (tx) => tx.put('flags', sampleFlag('c')))
      expect(heard.map((h) => h.commit.changes.map((c) => [c.seq, c.id, c.after === null]))).toEqual([
        [[1, 'flg_a', false]],
        [[2, 'flg_b', false]],
        [[3, 'flg_a', true]],
      ])
      expect(heard.every((h) => h.visible)).toBe(true)
      expect(heard[1]?.commit.meta).toEqual({ ...meta, requestId: 'req-2', source: 'api' })
      expect(heard[2]?.commit.changes[0]?.before).toEqual(sampleFlag('a'))
      expect(Number.isNaN(Date.parse(heard[0]?.commit.at ?? ''))).toBe(false)
    })

    test('100 concurrent transactions: all durable, sequence numbers unique and increasing', async () => {
      const { store, reopen } = await fresh()
      const outs = await Promise.all(
        Array.from({ length: 100 }, (_, i) => store.transact(meta, (tx) => tx.put('flags', sampleFlag(`f${i}`)))),
      )
      expect(outs.map((o) => o.revision)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1))
      const again = await reopen()
      expect(again.committed().flags.size).toBe(100)
      expect(again.committed().revision).toBe(100)
      const next = await again.transact(meta, (tx) => tx.put('flags', sampleFlag('after')))
      expect(next.revision).toBe(101) // never reused across restarts
    })

    test('snapshots are immutable: rows are frozen and an old snapshot does not change', async () => {
      const { store } = await fresh()
      await store.transact(meta, (tx) => tx.put('flags', sampleFlag('a')))
      const before = store.committed()
      await store.transact(meta, (tx) => tx.put('flags', sampleFlag('b')))
      expect([...before.flags.keys()]).toEqual(['a'])
      expect(before.revision).toBe(1)
      expect(() => {
        ;(before.flags.get('a') as { description: string }).description = 'changed'
      }).toThrow()
    })

    test('session last use is kept without a change and survives a reopen', async () => {
      const { store, reopen } = await fresh()
      await store.transact(meta, (tx) => {
        tx.put('users', user('u1'))
        tx.put('sessions', session('s1'))
      })
      const revision = store.committed().revision
      store.touch('sessions', 's1', '2026-11-22T10:05:00.000Z')
      store.touch('sessions', 's1', '2026-11-22T10:04:00.000Z') // older: ignored
      expect(store.lastUsed('sessions', store.committed().sessions.get('s1') as StoredSession)).toBe('2026-11-22T10:05:00.000Z')
      expect(store.committed().revision).toBe(revision)
      const again = await reopen()
      expect(again.lastUsed('sessions', again.committed().sessions.get('s1') as StoredSession)).toBe('2026-11-22T10:05:00.000Z')
    })

    test('token last use starts null, is kept without a change and survives a reopen', async () => {
      const { store, reopen } = await fresh()
      const row: StoredToken = {
        id: 'tok_1',
        name: 'ci',
        secretHash: 'a'.repeat(64),
        permissions: ['flag:read'],
        flagPrefixes: [],
        createdAt: '2026-11-22T10:00:00.000Z',
        createdBy: { type: 'system', id: 'cli', name: 'cli' },
        expiresAt: null,
        lastUsedAt: null,
      }
      await store.transact(meta, (tx) => tx.put('tokens', row))
      const token = () => store.committed().tokens.get('tok_1') as StoredToken
      expect(store.lastUsed('tokens', token())).toBeNull()
      const revision = store.committed().revision
      store.touch('tokens', 'tok_1', '2026-11-22T10:05:00.000Z')
      expect(store.lastUsed('tokens', token())).toBe('2026-11-22T10:05:00.000Z')
      expect(store.committed().revision).toBe(revision)
      const again = await reopen()
      expect(again.lastUsed('tokens', again.committed().tokens.get('tok_1') as StoredToken)).toBe('2026-11-22T10:05:00.000Z')
      expect(again.committed().tokens.get('tok_1')).toMatchObject({ ...row, lastUsedAt: '2026-11-22T10:05:00.000Z' })
    })

    test('flush writes pending last uses without a change; with nothing pending it writes nothing', async () => {
      const { store, harness } = await fresh()
      await store.transact(meta, (tx) => {
        tx.put('users', user('u1'))
        tx.put('sessions', session('s1'))
      })
      const revision = store.committed().revision
      await store.flush()
      const writes = store.writes
      await store.flush() // nothing pending
      expect(store.writes).toBe(writes)
      store.touch('sessions', 's1', '2026-11-22T10:07:00.000Z')
      await store.flush()
      expect(store.committed().revision).toBe(revision) // a use is not a change
      if (harness.replica) {
        // another replica reads it from storage without this one closing
        const other = await harness.replica()
        try {
          await other.refresh()
          expect(other.lastUsed('sessions', other.committed().sessions.get('s1') as StoredSession)).toBe('2026-11-22T10:07:00.000Z')
        } finally {
          await other.close()
        }
      } else expect(store.writes).toBe(writes + 1)
    })

    test('refresh resolves with what this store already has', async () => {
      const { store } = await fresh()
      await store.transact(meta, (tx) => tx.put('flags', sampleFlag('a')))
      await store.refresh()
      expect(store.committed().flags.has('a')).toBe(true)
    })

    test.if(can.replicas === true)('refresh brings in what another replica committed before it', async () => {
      const { store, harness } = await fresh()
      if (!harness.replica) throw new Error('the harness has no replica')
      const other = await harness.replica()
      try {
        await other.transact(meta, (tx) => tx.put('flags', sampleFlag('from-the-other')))
        await store.refresh()
        expect(store.committed().flags.get('from-the-other')?.name).toBe('from-the-other')
      } finally {
        await other.close()
      }
    })

    test.if(can.failWrites === true)(
      'a failed write fails its transaction and turns the store read-only; committed state stays as it was',
      async () => {
        const { store, harness } = await fresh()
        if (!harness.failWrites) throw new Error('the harness has no failWrites')
        await store.transact(meta, (tx) => tx.put('flags', sampleFlag('kept')))
        const before = store.committed()
        harness.failWrites()
        await expect(store.transact(meta, (tx) => tx.put('flags', sampleFlag('lost')))).rejects.toMatchObject({ code: 'UNAVAILABLE' })
        expect(store.writable).toBe(false)
        expect(store.committed()).toBe(before)
        // later writes are refused at once, reads go on
        await expect(store.transact(meta, (tx) => tx.put('flags', sampleFlag('refused')))).rejects.toMatchObject({ code: 'UNAVAILABLE' })
        expect([...store.committed().flags.keys()]).toEqual(['kept'])
      },
    )

    test('a backup is written in the same commit and named in the result', async () => {
      const { store, harness } = await fresh()
      const out = await store.transact(meta, (tx) => {
        tx.backup('flagd_migration_test_20261122-101500.json', '{"flags":{}}\n')
        tx.put('flags', sampleFlag('a'))
      })
      expect(out.backups).toEqual(['flagd_migration_test_20261122-101500.json'])
      const second = await store.transact(meta, (tx) => tx.backup('flagd_migration_test_20261122-101500.json', 'second\n'))
      expect(second.backups).toEqual(['flagd_migration_test_20261122-101500-2.json'])
      const path = join(harness.dataDir, 'backups', 'flagd_migration_test_20261122-101500.json')
      expect(existsSync(path) && readFileSync(path, 'utf8')).toBe('{"flags":{}}\n')
    })
  })
}
