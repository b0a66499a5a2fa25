/**
 * Clients of the sync port that never read (docs/openfeature.md#in-process), against a running
 * daemon whose flagd document is about 3 MB: SyncFlags streams on connections that grant no window
 * (HTTP/2 flow control withheld, so every document written waits in the daemon). The daemon refuses
 * the streams past its budget of documents in flight, its memory stays within a bound that holding
 * one document per stream would pass several times, `/health` keeps answering, and a provider that
 * reads is served once the attacker leaves.
 */

import { beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { credentials, Metadata, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js'
import { DEFAULT_STREAM_LIMITS } from '../../src/sync/stream-budget.ts'
import { FLAG_SYNC_SERVICE } from '../../src/sync/sync-protocol.ts'
import { freePort } from '../helpers/daemon.ts'
import * as attacks from '../helpers/rpc-attacks.ts'
import { type AdminDaemon, daemonForFile } from '../helpers/test-daemon.ts'

setDefaultTimeout(120_000)

const syncPort = freePort()
const daemon = daemonForFile({ FLAGD_SYNC_PORT: String(syncPort) })
let d: AdminDaemon
let target: attacks.AttackTarget

beforeAll(async () => {
  d = daemon()
  expect((await d.api('PUT', '/api/migrations', attacks.largeSyncDocument('2026-12-07T00:00:00Z'))).status).toBe(200)
  target = { rpcPort: 0, syncPort, token: await d.token('provider', ['flag:evaluate']) }
})

const Client = makeGenericClientConstructor(FLAG_SYNC_SERVICE, 'FlagSyncService')

/** A provider that reads: its first document's length, or the status its stream ended with. */
async function reader(): Promise<{ bytes?: number; code?: number }> {
  const client = new Client(`127.0.0.1:${target.syncPort}`, credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
    'grpc.max_receive_message_length': 64 * 2 ** 20,
  }) as unknown as { syncFlags(r: object, m: Metadata): { on(e: string, f: (x: never) => void): void; cancel(): void }; close(): void }
  const metadata = new Metadata()
  metadata.set('authorization', `Bearer ${target.token}`)
  const call = client.syncFlags({ providerId: '', selector: '' }, metadata)
  const first = await new Promise<{ bytes?: number; code?: number }>((resolve) => {
    call.on('data', (m: { flagConfiguration: string }) => resolve({ bytes: m.flagConfiguration.length }))
    call.on('error', (e: ServiceError) => resolve({ code: e.code }))
  })
  call.cancel()
  client.close()
  return first
}

const kB = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${d.proc.pid}/status`, 'utf8'))?.[1])

/** Runs `attack` while `/health` is asked one request after another; its outcome, the answers counted, and the peak's growth (MB). */
async function underAttack<T>(attack: () => Promise<T>) {
  writeFileSync(`/proc/${d.proc.pid}/clear_refs`, '5') // the peak starts again from now
  const before = kB('VmRSS')
  let attacking = true
  const statuses: number[] = []
  const asking = (async () => {
    while (attacking)
      statuses.push(
        await fetch(`${d.url}/health`).then(
          (r) => r.status,
          () => 0,
        ),
      )
  })()
  const outcome = await attack()
  const grewMb = (kB('VmHWM') - before) / 1024
  // and one more answer once the attack holds what it took
  statuses.push(
    await fetch(`${d.url}/health`).then(
      (r) => r.status,
      () => 0,
    ),
  )
  attacking = false
  await asking
  return { outcome, statuses, grewMb }
}

test('1,000 streams on one connection that grants no window: refused past the budget, memory bounded, /health answered', async () => {
  const first = await reader()
  const documentBytes = first.bytes as number
  expect(documentBytes).toBeGreaterThan(2_500_000)
  const r = await underAttack(() => attacks.withheldSyncStreams(target, 1, 1000))
  // the documents in flight fit the budget; every other stream is refused or its connection closed
  expect(r.outcome.opened).toBeLessThanOrEqual(Math.ceil(DEFAULT_STREAM_LIMITS.unreadBytes / documentBytes))
  expect(r.outcome.refused > 0 || r.outcome.closed === 1).toBe(true)
  r.outcome.leave()
  // one document per stream held would be 3 GB; a bound of 200 MB leaves room for everything else
  expect(r.grewMb).toBeLessThan(200)
  expect(r.statuses.length).toBeGreaterThan(1)
  expect(r.statuses.every((s) => s === 200)).toBe(true)
})

test('20 streams on each of 50 connections that grant no window: refused past the budget, memory bounded; a reader is served after', async () => {
  const r = await underAttack(() => attacks.withheldSyncStreams(target, 50, 20))
  const documentBytes = 2_500_000 // at least (the test above)
  expect(r.outcome.opened).toBeLessThanOrEqual(Math.ceil(DEFAULT_STREAM_LIMITS.unreadBytes / documentBytes))
  expect(r.outcome.refused).toBeGreaterThan(0)
  // a provider that reads is refused while the budget is held, not made to wait
  expect((await reader()).code).toBe(8)
  expect(r.grewMb).toBeLessThan(200)
  expect(r.statuses.length).toBeGreaterThan(1)
  expect(r.statuses.every((s) => s === 200)).toBe(true)
  r.outcome.leave()
  // once the attacker is gone, the room is free again
  let served = await reader()
  while (served.code === 8) served = await reader()
  expect(served.bytes).toBeGreaterThan(2_500_000)
})
