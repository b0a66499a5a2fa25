/**
 * The follower's liveness check (docs/operations.md#replicas) against a fake store: a database that
 * answers its heartbeat is never counted lost, even when this process is too busy to listen for a
 * while (a long import's work, a saturated machine); one that does not answer is.
 */

import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test'
import type { Socket, SQL, TCPSocketListener } from 'bun'
import { type FollowerHost, PostgresFollower } from '../../src/storage/postgres-follower.ts'

const followers: PostgresFollower[] = []
afterEach(() => {
  for (const f of followers.splice(0)) f.stopPolling()
})

// a stand-in database on 127.0.0.1 that answers each byte at once: its answer is socket input, the
// kind of event a busy thread handles only after the timers that came due meanwhile
let database: TCPSocketListener | undefined
let client: Socket | undefined
let answered: () => void = () => {}
beforeAll(async () => {
  database = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data: (s, d) => void s.write(d) } })
  client = await Bun.connect({ hostname: '127.0.0.1', port: database.port, socket: { data: () => answered() } })
})
afterAll(() => {
  client?.end()
  database?.stop(true)
})

/** Sends a heartbeat to the stand-in database; resolves when it answers. */
function ask(): Promise<void> {
  const answer = new Promise<void>((resolve) => (answered = resolve))
  client!.write('?')
  return answer
}

/** A store whose heartbeat `answer` decides; resolves `outcome` at the first loss or catch-up. */
function fakeHost(answer: () => Promise<void>) {
  let settle: (what: 'lost' | 'caught up') => void = () => {}
  const outcome = new Promise<'lost' | 'caught up'>((resolve) => (settle = resolve))
  const host: FollowerHost = {
    sql: { listen: async () => ({ unlisten: async () => {} }) } as unknown as SQL,
    healthy: true,
    heartbeat: answer,
    catchUp: async () => settle('caught up'),
    housekeeping: async () => {},
    lost: () => settle('lost'),
    recovered: () => {},
  }
  return { host, outcome }
}

async function follow(host: FollowerHost, livenessMs: number): Promise<void> {
  const follower = new PostgresFollower(host, 5, livenessMs)
  followers.push(follower)
  await follower.start()
}

test('a heartbeat answered at once is no outage, though the process was too busy to listen for three limits', async () => {
  // the database answers at once (the next turn of the event loop), but the thread is held for three
  // liveness limits first, as a long synchronous import's work holds it
  let first = true
  const { host, outcome } = fakeHost(() => {
    const answer = ask()
    if (first) queueMicrotask(() => Bun.sleepSync(300))
    first = false
    return answer
  })
  await follow(host, 100)
  expect(await outcome).toBe('caught up')
})

test('a heartbeat that is never answered is an outage', async () => {
  const { host, outcome } = fakeHost(() => new Promise<void>(() => {}))
  await follow(host, 20)
  expect(await outcome).toBe('lost')
})
