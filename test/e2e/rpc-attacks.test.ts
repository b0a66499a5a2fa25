/**
 * The limits of the evaluation and sync ports (docs/openfeature.md#limits) against a running
 * daemon: each attack of one unauthenticated client (test/helpers/rpc-attacks.ts) ends with its
 * connection closed or its call refused with the right status, while `/health` and a well-behaved
 * gRPC client started during the attack are answered, and the daemon's peak memory grows by less
 * than the contract's 300 MB.
 */

import { beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync, writeFileSync } from 'node:fs'
import { credentials, Metadata, makeGenericClientConstructor } from '@grpc/grpc-js'
import { evaluationService } from '../../src/sync/evaluation-protocol.ts'
import { freePort } from '../helpers/daemon.ts'
import * as attacks from '../helpers/rpc-attacks.ts'
import { type AdminDaemon, daemonForFile } from '../helpers/test-daemon.ts'

setDefaultTimeout(60_000)

const [rpcPort, syncPort] = [freePort(), freePort()]
const daemon = daemonForFile({ FLAGD_EVALUATION_PORT: String(rpcPort), FLAGD_SYNC_PORT: String(syncPort) })
let d: AdminDaemon
let target: attacks.AttackTarget

beforeAll(async () => {
  d = daemon()
  expect((await d.api('POST', '/api/flags', { name: 'on', type: 'BOOLEAN', value: true })).status).toBe(201)
  target = { rpcPort, syncPort, token: await d.token('provider', ['flag:evaluate']) }
  attacks.gzipBombMessage() // made before any attack: the attacker's own work
})

const Client = makeGenericClientConstructor(evaluationService('v2'), 'Service')
type Rpc = { ResolveBoolean(r: object, m: Metadata, done: (e: Error | null, a?: { value: boolean }) => void): void; close(): void }

/** A well-behaved provider's call, on a connection of its own. */
async function wellBehavedCall(): Promise<boolean | undefined> {
  const rpc = new Client(`127.0.0.1:${target.rpcPort}`, credentials.createInsecure(), {
    'grpc.use_local_subchannel_pool': 1,
  }) as unknown as Rpc
  const metadata = new Metadata()
  metadata.set('authorization', `Bearer ${target.token}`)
  try {
    return await new Promise((resolve, reject) =>
      rpc.ResolveBoolean({ flagKey: 'on' }, metadata, (e, a) => (e ? reject(e) : resolve(a?.value))),
    )
  } finally {
    rpc.close()
  }
}

const kB = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${d.proc.pid}/status`, 'utf8'))?.[1])

/**
 * Runs `attack` while `/health` and a well-behaved call are made; answers the attack's outcome, what
 * those two got, and how far the daemon's peak memory rose over its memory before (MB).
 */
async function underAttack<T>(attack: (t: attacks.AttackTarget) => Promise<T>) {
  writeFileSync(`/proc/${d.proc.pid}/clear_refs`, '5') // the peak starts again from now
  const before = kB('VmRSS')
  const running = attack(target)
  const [outcome, health, answer] = await Promise.all([running, fetch(`${d.url}/health`).then((r) => r.status), wellBehavedCall()])
  return { outcome, health, answer, grewMb: (kB('VmHWM') - before) / 1024, alive: d.proc.exitCode === null }
}

const healthy = (r: { health: number; answer: boolean | undefined; grewMb: number; alive: boolean }) => {
  expect(r.alive).toBe(true)
  expect(r.health).toBe(200)
  expect(r.answer).toBe(true)
  expect(r.grewMb).toBeLessThan(300)
}

test('a 64 kB header block that decodes to 240 MB (one table entry named 60,000 times) is refused', async () => {
  const r = await underAttack(attacks.hpackBomb)
  expect(r.outcome.closed || r.outcome.goAway !== undefined || r.outcome.resets > 0).toBe(true)
  expect(r.outcome.answers).toBe(0)
  healthy(r)
})

test('a flood of empty CONTINUATION frames ends its connection (GOAWAY) or is read through holding nothing', async () => {
  const r = await underAttack(attacks.emptyContinuationFlood)
  expect(r.outcome.answers).toBe(0)
  expect(r.outcome.goAway !== undefined || r.outcome.closed || r.outcome.pingAnswered).toBe(true)
  healthy(r)
})

test('4 MB of tiny calls from a client that never reads its answers: the output waiting for it stays bounded', async () => {
  const r = await underAttack(attacks.unreadAnswers)
  // Bun's HTTP/2 closes the connection past its session memory, or stops reading it; either way the output waiting is bounded
  healthy(r)
})

test('a gzip message that inflates past 4 MiB is RESOURCE_EXHAUSTED over gRPC, resource_exhausted (429) over Connect', async () => {
  const r = await underAttack(attacks.gzipBomb)
  expect(r.outcome.status).toBe(8)
  expect(r.outcome.connectStatus).toBe(429)
  expect(r.outcome.connectCode).toBe('resource_exhausted')
  healthy(r)
})

test('request bodies past the flow-control window close the connection', async () => {
  const r = await underAttack(attacks.bodiesPastTheWindow)
  expect(r.outcome.closed || r.outcome.goAway !== undefined || r.outcome.resets > 0).toBe(true)
  healthy(r)
})

test('a PING flood from a client that never reads the acknowledgements closes its connection', async () => {
  const r = await underAttack(attacks.pingFlood)
  expect(r.outcome.closed).toBe(true)
  healthy(r)
})

test('HTTP/1.1 requests that are no Connect call get a plain 4xx, never a page or a stack', async () => {
  const r = await underAttack(attacks.http1Probes)
  for (const answer of r.outcome) {
    expect(answer.status).toBeGreaterThanOrEqual(400)
    expect(answer.status).toBeLessThan(500)
    expect(answer.body).not.toMatch(/<html|<!doctype|\bat .+:\d+:\d+|node_modules|\/src\//i)
  }
  expect(r.outcome.slice(0, 3).map((a) => a.type)).toEqual(Array(3).fill('text/plain; charset=utf-8'))
  healthy(r)
})

test('1,000 SyncFlags streams of one token, never read: 200 open (the token’s cap), the rest RESOURCE_EXHAUSTED', async () => {
  const r = await underAttack(attacks.unreadSyncStreams)
  expect(r.outcome.opened).toBe(200)
  expect(r.outcome.refused).toBe(800)
  expect(r.outcome.codes).toEqual([8])
  healthy(r)
})

test('HTTP/2 protocol violations (frames on the wrong stream or of the wrong size, malformed header lists) are refused, never answered', async () => {
  const r = await underAttack(attacks.protocolViolations)
  for (const v of r.outcome) expect({ ...v, refused: true, answered: false }).toEqual(v)
  healthy(r)
})
