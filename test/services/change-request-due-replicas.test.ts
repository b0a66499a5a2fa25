/**
 * Scheduled change requests due together on replicas of one PostgreSQL database
 * (docs/change-control.md#scheduled-changes): every replica runs the schedule, the rounds overlap,
 * and each request is applied exactly once, by one of them, recorded once.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import type { Store } from '../../src/storage/store.ts'
import { eventually } from '../helpers/eventually.ts'
import { type Replica, replicaSuite } from '../helpers/postgres-replicas.ts'
import { START, storedUser } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

setDefaultTimeout(60_000)
let at = START
const now = () => new Date(at)
const pg = replicaSuite(now)
const bin = pg.bin

test.skipIf(!bin)('requests due together on two replicas are each applied once, whichever replica applies it', async () => {
  const COUNT = 60
  const [a, b] = (await pg.replicas(2)) as [Replica, Replica]
  await a.s.environments.ensureDefault(SYSTEM)
  const flags = Object.fromEntries(Array.from({ length: COUNT }, (_, i) => [`f${i}`, { type: 'INTEGER', value: 1 }]))
  const doc = { environment: 'development', version: '1.0.0', createdAt: '2026-12-01T00:00:00.000Z', flags }
  await a.s.migrations.importDocument(SYSTEM, doc, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
  const author = await storedUser(a.s, 'author', ['flag:read', 'flag:write'])
  const scheduledAt = new Date(at + 60_000).toISOString()
  const ids: string[] = []
  for (let i = 0; i < COUNT; i++) {
    const made = await a.s.changeRequests.create(author.as(), {
      environment: 'development',
      title: `raise f${i}`,
      changes: [{ flag: `f${i}`, set: { value: 7 } }],
      scheduledAt,
    })
    ids.push(made.id)
  }
  const sees = (store: Store) => [...store.committed().changeRequests.values()].filter((r) => r.state === 'scheduled').length === COUNT
  await eventually(() => sees(b.store), { wakeOn: (wake) => b.store.onCommit(wake) })
  at += 60_000
  const rounds = await Promise.all([a.s.changeRequests.applyDue(), b.s.changeRequests.applyDue(), a.s.changeRequests.applyDue()])
  const reported = rounds.flat().map((o) => o.request.id)
  expect(reported.sort()).toEqual([...ids].sort())
  const applied = (store: Store) => [...store.committed().changeRequests.values()].filter((r) => r.state === 'applied').length === COUNT
  await eventually(() => applied(a.store) && applied(b.store), { wakeOn: (wake) => a.store.onCommit(wake) })
  const entries = (await a.s.audit.list(SYSTEM.principal, { limit: 1000 })).entries
  const updates = entries.filter((e) => e.action === 'flag.updated' && e.changeRequest !== undefined)
  expect(updates.map((e) => e.changeRequest).sort()).toEqual([...ids].sort())
  expect(entries.filter((e) => e.action === 'change-request.applied').length).toBe(COUNT)
  for (const e of updates) expect(e).toMatchObject({ source: 'schedule', actor: { id: author.id } })
  for (let i = 0; i < COUNT; i++) expect(b.s.flags.get(SYSTEM.principal, `f${i}`).value).toBe(7)
})
