/**
 * The audit log's contract (`AuditLog` in `src/storage/store.ts`) as a suite every store runs:
 * `describeAuditContract(name, harness)`. It talks to the interface only. Each filter is checked
 * against an oracle (the same filter applied to every entry in plain code), so the file store's
 * index scan and PostgreSQL's SQL are held to one meaning: flags by id through renames, names
 * before or after a change, actor, action prefix, time range, pages newest first and oldest first,
 * a flag's revision, retention, pruning, and reopening.
 */

import { afterEach, describe, expect, test } from 'bun:test'
import type { AuditEntry } from '../../src/domain/audit-entry.ts'
import type { Principal } from '../../src/domain/principal.ts'
import { systemPrincipal } from '../../src/domain/principal.ts'
import type { AuditQuery, CommitMeta, Store } from '../../src/storage/store.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'

/** How the suite gets stores: `open()` (re)opens the same storage, with a retention when given. */
export interface AuditHarness {
  open(options?: { auditRetentionMs?: number }): Promise<Store>
  destroy(): Promise<void>
}

// the store checks that whoever writes flags may (src/domain/write-guard.ts)
const alice: Principal = {
  kind: 'user',
  userId: 'usr_alice',
  username: 'alice',
  sessionId: 'ses_a',
  permissions: ['flag:write'],
  flagPrefixes: [],
}
const ci: Principal = { kind: 'token', tokenId: 'tok_ci', name: 'ci', permissions: ['flag:write'], flagPrefixes: [] }
const as = (principal: Principal, requestId: string, environment?: string): CommitMeta => ({
  principal,
  source: 'api',
  requestId,
  ...(environment ? { environment } : {}),
})

/** The history the suite reads: creations, updates, a rename, a delete, users, by three actors. */
async function writeHistory(store: Store): Promise<void> {
  const put = (meta: CommitMeta, name: string, value: string, revision: number, id?: string) =>
    store.transact(meta, (tx) =>
      tx.put('flags', {
        ...sampleFlag(name, value, revision),
        // the same state in every environment the history names: a write's own moves it
        states: Object.fromEntries(['development', 'staging', 'production'].map((env) => [env, { valueExists: true, value }])),
        ...(id ? { id } : {}),
      }),
    )
  await put(as(alice, 'r1'), 'app/a', 'one', 1)
  await put(as(ci, 'r2'), 'app/b', 'one', 1)
  // a change of one environment's state names it (docs/environments.md#audit)
  await put(as(alice, 'r3', 'staging'), 'app/a', 'two', 2)
  // a rename keeps the id: app/a becomes app/renamed
  await store.transact(as(ci, 'r4'), (tx) => {
    tx.delete('flags', 'flg_app_a')
    tx.put('flags', { ...sampleFlag('app/renamed', 'two', 3), id: 'flg_app_a' })
  })
  await store.transact({ principal: systemPrincipal('cli'), source: 'cli', requestId: 'r5' }, (tx) =>
    tx.put('users', {
      id: 'usr_bob',
      username: 'bob',
      passwordHash: 'x',
      permissions: [],
      createdAt: '2026-11-22T10:00:00.000Z',
      updatedAt: '2026-11-22T10:00:00.000Z',
    }),
  )
  await put(as(alice, 'r6', 'production'), 'app/b', 'two', 2)
  await store.transact(as(alice, 'r7'), (tx) => tx.delete('flags', 'flg_app_b'))
  // a new flag under a name the log has seen before (another id)
  await put(as(ci, 'r8'), 'app/a', 'fresh', 1, 'flg_app_a_again')
}

/** Every entry, newest first, by walking pages (the suite checks the walk separately). */
async function everything(store: Store): Promise<AuditEntry[]> {
  return store.audit.query({ limit: 1000 })
}

/** What `q` must return, worked out from every entry in plain code. */
function oracle(all: readonly AuditEntry[], q: AuditQuery, flagIdOf: (e: AuditEntry) => string | undefined): AuditEntry[] {
  const names = (e: AuditEntry) => [e.before?.name, e.after?.name, e.target.name].filter((n) => typeof n === 'string')
  const ms = (e: AuditEntry) => Date.parse(e.at)
  const picked = all.filter(
    (e) =>
      (q.flagIds === undefined || q.flagIds.includes(flagIdOf(e) ?? '')) &&
      (q.name === undefined || (e.action.startsWith('flag.') && names(e).includes(q.name))) &&
      (q.actorId === undefined || e.actor.id === q.actorId) &&
      (q.environment === undefined || e.environment === q.environment) &&
      (q.actionPrefix === undefined || [q.actionPrefix].flat().some((prefix) => e.action.startsWith(prefix))) &&
      (q.sinceMs === undefined || ms(e) >= q.sinceMs) &&
      (q.untilMs === undefined || ms(e) <= q.untilMs) &&
      (q.beforeId === undefined || e.id < q.beforeId) &&
      (q.afterId === undefined || e.id > q.afterId),
  )
  const ordered = q.afterId === undefined ? picked : [...picked].reverse()
  return ordered.slice(0, q.limit)
}

/** Registers the audit contract tests for one store. */
export function describeAuditContract(name: string, makeHarness: () => Promise<AuditHarness>): void {
  describe(`audit contract: ${name}`, () => {
    const cleanups: (() => Promise<void>)[] = []
    afterEach(async () => {
      for (const c of cleanups.splice(0).reverse()) await c()
    })
    async function withHistory(options?: { auditRetentionMs?: number }) {
      const harness = await makeHarness()
      let store = await harness.open(options)
      cleanups.push(async () => {
        await store.close()
        await harness.destroy()
      })
      await writeHistory(store)
      return {
        store: () => store,
        async reopen(next?: { auditRetentionMs?: number }) {
          await store.close()
          store = await harness.open(next)
          return store
        },
      }
    }
    // which flag each entry concerns, as the history above made them (ids are never shown in entries)
    const flagIdOf = (e: AuditEntry): string | undefined => {
      if (!e.action.startsWith('flag.')) return undefined
      if (e.requestId === 'r8') return 'flg_app_a_again'
      return e.target.name === 'app/b' ? 'flg_app_b' : 'flg_app_a'
    }

    test('one entry per change, newest first, with who, through what and the request', async () => {
      const { store } = await withHistory()
      const all = await everything(store())
      expect(all.map((e) => e.action)).toEqual([
        'flag.created',
        'flag.deleted',
        'flag.updated',
        'user.created',
        'flag.updated',
        'flag.updated',
        'flag.created',
        'flag.created',
      ])
      expect(all.map((e) => e.id)).toEqual([...all.map((e) => e.id)].sort((a, b) => b - a))
      expect(all.at(-1)).toMatchObject({ actor: { type: 'user', id: 'usr_alice', name: 'alice' }, source: 'api', requestId: 'r1' })
      expect(all.find((e) => e.requestId === 'r5')).toMatchObject({ actor: { type: 'system', id: 'cli' }, source: 'cli' })
      // the rename is one entry, before and after named
      expect(all.find((e) => e.requestId === 'r4')).toMatchObject({
        before: { name: 'app/a' },
        after: { name: 'app/renamed' },
        revision: 3,
      })
    })

    test('each filter alone and together returns exactly what the oracle says', async () => {
      const { store } = await withHistory()
      const all = await everything(store())
      const middle = all[Math.floor(all.length / 2)] as AuditEntry
      const queries: AuditQuery[] = [
        { flagIds: ['flg_app_a'], limit: 100 },
        { flagIds: ['flg_app_a', 'flg_app_b'], limit: 100 },
        { flagIds: [], limit: 100 },
        { name: 'app/a', limit: 100 },
        { name: 'app/renamed', limit: 100 },
        { name: 'bob', limit: 100 },
        { actorId: 'usr_alice', limit: 100 },
        { actorId: 'tok_ci', limit: 100 },
        { actionPrefix: 'flag.', limit: 100 },
        { actionPrefix: 'flag.upd', limit: 100 },
        { actionPrefix: 'user.', limit: 100 },
        { actionPrefix: ['flag.upd', 'user.'], limit: 100 },
        { actionPrefix: ['flag.', 'user.'], afterId: 1, limit: 3 },
        { sinceMs: Date.parse(middle.at), limit: 100 },
        { untilMs: Date.parse(middle.at), limit: 100 },
        { actorId: 'usr_alice', actionPrefix: 'flag.updated', flagIds: ['flg_app_a'], limit: 100 },
        { name: 'app/b', actorId: 'usr_alice', limit: 100 },
        { environment: 'staging', limit: 100 },
        { environment: 'production', actorId: 'usr_alice', limit: 100 },
        { environment: 'nowhere', limit: 100 },
        { limit: 3 },
      ]
      for (const q of queries) expect(await store().audit.query(q), JSON.stringify(q)).toEqual(oracle(all, q, flagIdOf))
      expect(all.filter((e) => typeof e.environment === 'string').map((e) => [e.requestId, e.environment])).toEqual([
        ['r6', 'production'],
        ['r3', 'staging'],
      ])
    })

    test('a flag is followed through its rename by id, and its old name finds what was named so', async () => {
      const { store } = await withHistory()
      const byId = await store().audit.query({ flagIds: ['flg_app_a'], limit: 100 })
      expect(byId.map((e) => e.requestId)).toEqual(['r4', 'r3', 'r1'])
      const byOldName = await store().audit.query({ name: 'app/a', limit: 100 })
      expect(byOldName.map((e) => e.requestId)).toEqual(['r8', 'r4', 'r3', 'r1'])
    })

    test('pages newest first (beforeId) and oldest first (afterId) each visit every entry once, in order', async () => {
      const { store } = await withHistory()
      const all = await everything(store())
      const down: AuditEntry[] = []
      let before: number | undefined
      for (;;) {
        const page = await store().audit.query({ limit: 3, ...(before === undefined ? {} : { beforeId: before }) })
        if (page.length === 0) break
        down.push(...page)
        before = (page.at(-1) as AuditEntry).id
      }
      expect(down).toEqual(all)
      const up: AuditEntry[] = []
      let afterId = 0
      for (;;) {
        const page = await store().audit.query({ limit: 3, afterId })
        if (page.length === 0) break
        up.push(...page)
        afterId = (page.at(-1) as AuditEntry).id
      }
      expect(up).toEqual([...all].reverse())
      // a page inside a filter
      const flags = await store().audit.query({ actionPrefix: 'flag.', afterId: (all.at(-1) as AuditEntry).id, limit: 2 })
      expect(flags).toEqual(oracle(all, { actionPrefix: 'flag.', afterId: (all.at(-1) as AuditEntry).id, limit: 2 }, flagIdOf))
    })

    test('a page with maxBytes is the start of the full page, never empty, and stops before passing the bytes', async () => {
      const { store } = await withHistory()
      const all = await everything(store())
      const one = await store().audit.query({ limit: 100, maxBytes: 1 })
      expect(one).toEqual(all.slice(0, 1))
      expect(one.truncated).toBe(true) // stopped by the bytes, more match
      const whole = await store().audit.query({ limit: 100, maxBytes: 100 * 1024 * 1024 })
      expect(whole).toEqual(all)
      expect(whole.truncated).toBeFalsy()
      // stopped by the limit, not the bytes
      expect((await store().audit.query({ limit: 2, maxBytes: 100 * 1024 * 1024 })).truncated).toBeFalsy()
      const some = await store().audit.query({ limit: 100, maxBytes: 2_000 })
      expect(some.length).toBeGreaterThanOrEqual(1)
      expect(some.length).toBeLessThan(all.length)
      expect(some).toEqual(all.slice(0, some.length))
      // oldest first too, and with a filter
      const up = await store().audit.query({ afterId: 0, actionPrefix: 'flag.', limit: 100, maxBytes: 1 })
      expect(up).toEqual(oracle(all, { afterId: 0, actionPrefix: 'flag.', limit: 1 }, flagIdOf))
    })

    test("a flag's revision is the entry that left it there; a deletion never is", async () => {
      const { store } = await withHistory()
      expect((await store().audit.flagRevision('flg_app_a', 2))?.requestId).toBe('r3')
      expect((await store().audit.flagRevision('flg_app_a', 3))?.requestId).toBe('r4')
      expect((await store().audit.flagRevision('flg_app_b', 2))?.requestId).toBe('r6') // not r7, its deletion at revision 2
      expect(await store().audit.flagRevision('flg_app_a', 9)).toBeUndefined()
      expect(await store().audit.flagRevision('flg_none', 1)).toBeUndefined()
    })

    test('entries survive reopening and numbering goes on after them', async () => {
      const { store, reopen } = await withHistory()
      const before = await everything(store())
      const again = await reopen()
      expect(await everything(again)).toEqual(before)
      await again.transact(as(alice, 'r9'), (tx) => tx.put('flags', sampleFlag('app/after', 'x', 1)))
      const [newest] = await again.audit.query({ limit: 1 })
      expect(newest?.requestId).toBe('r9')
      expect(newest?.id).toBeGreaterThan((before[0] as AuditEntry).id)
    })

    test('prune drops only entries older than the cutoff, says how many, and they stay gone', async () => {
      const { store, reopen } = await withHistory()
      const all = await everything(store())
      expect(await store().audit.prune(Date.parse((all.at(-1) as AuditEntry).at) - 1)).toBe(0)
      expect(await everything(store())).toEqual(all)
      // a cutoff inside the history never takes an entry at or after it
      const middle = Date.parse((all[3] as AuditEntry).at)
      const first = await store().audit.prune(middle)
      const kept = await everything(store())
      expect(kept).toHaveLength(all.length - first)
      for (const e of all) if (Date.parse(e.at) >= middle) expect(kept).toContainEqual(e)
      // a cutoff after everything may take all (PostgreSQL deletes rows; the file store drops whole
      // closed segments of its journal, so its newest entries stay until their segment closes)
      const second = await store().audit.prune(Date.now() + 60_000)
      expect(second).toBeGreaterThanOrEqual(0)
      const left = await everything(store())
      expect(left).toHaveLength(all.length - first - second)
      expect(await everything(await reopen())).toEqual(left)
    })

    test('entries past the retention are never returned, even before they are pruned', async () => {
      const { store, reopen } = await withHistory()
      const newest = (await everything(store()))[0] as AuditEntry
      // a retention of 1 ms: wait until the newest entry is older than that
      const again = await reopen({ auditRetentionMs: 1 })
      while (Date.now() <= Date.parse(newest.at) + 1) await Bun.sleep(1)
      expect(await everything(again)).toEqual([])
      expect(await again.audit.query({ afterId: 0, limit: 10 })).toEqual([])
      expect(await again.audit.flagRevision('flg_app_a', 2)).toBeUndefined()
      // with the retention lifted, nothing was lost
      expect(await everything(await reopen({ auditRetentionMs: 0 }))).toHaveLength(8)
    })
  })
}
