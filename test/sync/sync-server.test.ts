/**
 * The sync transport on its own, over a stub of the sync service: documents are sent once per
 * change (bursts merged, an unchanged document not repeated), and a stream whose token stops being
 * valid is closed by the periodic check even when nothing changes.
 */

import { afterEach, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { credentials, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js'
import type { FlagSyncService, SyncCaller } from '../../src/services/flag-sync-service.ts'
import type { StreamLimits } from '../../src/sync/stream-budget.ts'
import { FLAG_SYNC_SERVICE } from '../../src/sync/sync-protocol.ts'
import { type SyncServer, startSyncServer } from '../../src/sync/sync-server.ts'
import { wakeSignal } from '../helpers/eventually.ts'
import { withheldSyncStreams } from '../helpers/rpc-attacks.ts'

const servers: SyncServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close()
})

/** A sync service whose document, validity and changes the test drives. */
function stubService(caller: SyncCaller = { kind: 'anonymous' }) {
  const listeners = new Set<() => void>()
  let released: () => void = () => {}
  const state = {
    document: '{"flags":{}}',
    valid: true,
    built: 0,
    held: 0,
    served: 0,
    /** Resolves when a stream next lets its flags go. */
    released: new Promise<void>((resolve) => {
      released = resolve
    }),
  }
  const service: FlagSyncService = {
    callerOf: () => caller,
    refresh: (caller: SyncCaller) => (state.valid ? caller : undefined),
    documentFor: () => {
      state.built++
      return state.document
    },
    revision: () => state.built,
    onChange(listener) {
      listeners.add(listener)
      return () => listeners.delete(listener)
    },
    nameOf: () => 'stub',
    held: () => {
      state.held++
      return {
        sent() {},
        release() {
          state.held--
          released()
        },
      }
    },
    served: () => {
      state.served++
    },
    answered: () => {},
  }
  const change = () => {
    for (const l of listeners) l()
  }
  return { service, state, change }
}

const Client = makeGenericClientConstructor(FLAG_SYNC_SERVICE, 'FlagSyncService')

async function open(
  timing: { recheckMs?: number; quietMs?: number } = {},
  document?: string,
  more: { limits?: Partial<StreamLimits>; caller?: SyncCaller } = {},
) {
  const stub = stubService(more.caller)
  if (document !== undefined) stub.state.document = document
  const events: string[] = []
  const heard = wakeSignal()
  const note = (event: string) => {
    events.push(event)
    heard.fire()
  }
  /** Resolves once the server has reported `event` (woken by each report, no timer). */
  const reported = (event: string) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!events.includes(event)) return
        stop()
        resolve()
      }
      const stop = heard.wakeOn(check)
      check()
    })
  const server = (await startSyncServer(
    { port: 0, host: '127.0.0.1', socket: undefined, anonymous: true, ...(more.limits ? { limits: more.limits } : {}) },
    stub.service,
    {
      opened: (caller) => note(`opened ${caller}`),
      closed: (caller, _peer, why) => note(`closed ${caller}: ${why}`),
      oversized: (caller, bytes) => note(`oversized ${caller}: ${bytes}`),
    },
    timing,
  )) as SyncServer
  servers.push(server)
  const client = new Client(`127.0.0.1:${server.port}`, credentials.createInsecure()) as unknown as {
    syncFlags(r: object): { on(e: string, f: (x: never) => void): void; cancel(): void }
    close(): void
  }
  const received: string[] = []
  let status: number | undefined
  const stream = client.syncFlags({ providerId: '', selector: '' })
  stream.on('data', (m: { flagConfiguration: string }) => received.push(m.flagConfiguration))
  stream.on('error', (e: ServiceError) => {
    status = e.code
  })
  while (received.length === 0 && status === undefined) await Bun.sleep(2)
  return { ...stub, server, client, stream, received, events, reported, status: () => status }
}

test('a burst of changes is one message; an unchanged document is not sent again', async () => {
  const s = await open()
  s.state.document = '{"flags":{"a":{}}}'
  for (let i = 0; i < 10; i++) s.change()
  await Bun.sleep(100)
  s.change() // the same document: nothing to send
  await Bun.sleep(100)
  expect(s.received).toEqual(['{"flags":{}}', '{"flags":{"a":{}}}'])
  expect(s.server.streamCount()).toBe(1)
  s.client.close()
})

test('a change after a quiet spell goes out at once; one close behind a fan-out waits for the quiet time', async () => {
  const s = await open({ quietMs: 4000 }) // far longer than any wait below
  s.state.document = '{"flags":{"a":{}}}'
  s.change()
  const deadline = Date.now() + 2000
  while (s.received.length < 2 && Date.now() < deadline) await Bun.sleep(5)
  expect(s.received).toEqual(['{"flags":{}}', '{"flags":{"a":{}}}'])
  s.state.document = '{"flags":{"b":{}}}'
  s.change() // within the quiet time of the fan-out above: held back
  await Bun.sleep(300)
  expect(s.received).toHaveLength(2)
  s.client.close()
})

test('a document over gRPC clients’ default 4 MiB is still sent, and reported once', async () => {
  const big = JSON.stringify({ flags: {}, padding: 'x'.repeat(4 * 1024 * 1024) })
  const s = await open({}, big)
  // a default client refuses it: what the report is for
  expect(s.status()).toBe(8) // RESOURCE_EXHAUSTED
  expect(s.events).toContain(`oversized stub: ${big.length}`)
  expect(s.events.filter((e) => e.startsWith('oversized'))).toHaveLength(1)
  s.client.close()
})

test('a change reaches every stream when the fan-out takes several turns (more streams than one slice)', async () => {
  const s = await open()
  const more = Array.from({ length: 249 }, () => {
    const c = new Client(`127.0.0.1:${s.server.port}`, credentials.createInsecure(), {
      'grpc.use_local_subchannel_pool': 1,
    }) as unknown as {
      syncFlags(r: object): { on(e: string, f: (x: never) => void): void }
      close(): void
    }
    const got: string[] = []
    c.syncFlags({ providerId: '', selector: '' }).on('data', (m: { flagConfiguration: string }) => got.push(m.flagConfiguration))
    return { c, got }
  })
  const deadline = Date.now() + 10_000
  while (s.server.streamCount() < 250 && Date.now() < deadline) await Bun.sleep(10)
  s.state.document = '{"flags":{"b":{}}}'
  s.change()
  while (more.some((m) => m.got.at(-1) !== s.state.document) && Date.now() < deadline) await Bun.sleep(10)
  expect(more.filter((m) => m.got.at(-1) === s.state.document)).toHaveLength(249)
  while (s.received.at(-1) !== s.state.document && Date.now() < deadline) await Bun.sleep(10)
  expect(s.received.at(-1)).toBe(s.state.document)
  for (const m of more) m.c.close()
  s.client.close()
})

test('a token that stops being valid has its stream closed by the periodic check, with no change', async () => {
  const s = await open({ recheckMs: 100 })
  s.state.valid = false
  const deadline = Date.now() + 2000
  while (s.status() === undefined && Date.now() < deadline) await Bun.sleep(10)
  expect(s.status()).toBe(16)
  expect(s.server.streamCount()).toBe(0)
  expect(s.events).toEqual(['opened stub', 'closed stub: token revoked or expired'])
  s.client.close()
})

test('a stream holds its flags for usage while open, and lets them go when it ends', async () => {
  const s = await open()
  expect(s.state.held).toBe(1)
  s.stream.cancel()
  await s.state.released
  expect([s.state.held, s.server.streamCount()]).toEqual([0, 0])
  s.client.close()
})

test('GetMetadata answers as flagd does with no static context values: an empty Struct', async () => {
  const s = await open()
  const meta = await new Promise<unknown>((resolve, reject) =>
    (s.client as unknown as { getMetadata(r: object, done: (e: ServiceError | null, r: unknown) => void): void }).getMetadata({}, (e, r) =>
      e ? reject(e) : resolve(r),
    ),
  )
  expect(meta).toEqual({ metadata: {} }) // present, with no fields
  s.client.close()
})

test('the protocol embedded in the binary is flagd-schemas’ sync.proto, unchanged', () => {
  const embedded = readFileSync(join(import.meta.dir, '../../src/sync/sync.proto'), 'utf8')
  const conformance = readFileSync(join(import.meta.dir, '../fixtures/openfeature/flagd-schemas/protobuf/flagd/sync/v1/sync.proto'), 'utf8')
  expect(embedded).toBe(conformance)
})

/** Opens one more SyncFlags stream to `s`'s server; resolves with its first document, or the status it was refused with. */
function another(port: number, pause = false) {
  const client = new Client(`127.0.0.1:${port}`, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }) as unknown as {
    syncFlags(r: object): { on(e: string, f: (x: never) => void): void; pause(): void; cancel(): void }
    close(): void
  }
  const call = client.syncFlags({ providerId: '', selector: '' })
  call.on('error', () => {})
  if (pause) call.pause()
  const first = new Promise<{ document?: string; code?: number }>((resolve) => {
    call.on('data', (m: { flagConfiguration: string }) => resolve({ document: m.flagConfiguration }))
    call.on('error', (e: ServiceError) => resolve({ code: e.code }))
  })
  const ended = new Promise<number>((resolve) => call.on('error', (e: ServiceError) => resolve(e.code)))
  const close = () => {
    call.cancel()
    client.close()
  }
  return { close, first, ended, metadata: new Promise<void>((resolve) => call.on('metadata', () => resolve())) }
}

test('streams are capped per token and in total: the one past a cap is refused RESOURCE_EXHAUSTED, and a place freed is taken again', async () => {
  const token: SyncCaller = { kind: 'token', principal: { tokenId: 't1' } as never }
  const s = await open({}, undefined, { limits: { perToken: 2, total: 10 }, caller: token })
  const second = another(s.server.port as number)
  expect((await second.first).document).toBe('{"flags":{}}')
  const third = another(s.server.port as number)
  expect((await third.first).code).toBe(8)
  second.close()
  while (s.server.streamCount() > 1) await Bun.sleep(5)
  const again = another(s.server.port as number)
  expect((await again.first).document).toBe('{"flags":{}}')
  for (const c of [third, again]) c.close()
  s.client.close()

  const anonymous = await open({}, undefined, { limits: { perToken: 1, total: 2 } })
  const within = another(anonymous.server.port as number) // anonymous callers have only the total
  expect((await within.first).document).toBe('{"flags":{}}')
  const past = another(anonymous.server.port as number)
  expect((await past.first).code).toBe(8)
  for (const c of [within, past]) c.close()
  anonymous.client.close()
})

/** A client that grants no window (tests/helpers/rpc-attacks.ts) on `s`'s server, with `count` streams on each of `connections`. */
const withheld = (s: { server: SyncServer }, connections: number, count: number) =>
  withheldSyncStreams({ rpcPort: 0, syncPort: s.server.port as number, token: 'unused' }, connections, count)

test('a client that grants no window has its stream ended at the next sweep and its connection closed; a reader is left alone', async () => {
  // a document far past the 64 KiB window a client grants before it reads
  const s = await open({ recheckMs: 50 }, JSON.stringify({ flags: {}, padding: 'x'.repeat(256 * 1024) }))
  const slow = await withheld(s, 1, 1)
  expect(slow.opened).toBe(1)
  await s.reported('closed stub: the client does not read')
  expect(s.server.streamCount()).toBe(1) // the reader's
  slow.leave()
  s.client.close()
})

test('unread documents are bounded in octets: streams past the budget are refused, and a reader is served once the slow ones leave', async () => {
  const doc = JSON.stringify({ flags: {}, padding: 'x'.repeat(300 * 1024) })
  const s = await open({}, doc, { limits: { unreadBytes: 1024 * 1024 } })
  // the first reader has its document: nothing of it is unread
  const slow = await withheld(s, 2, 10)
  // three documents of 300 kB fit in 1 MiB (the reader's was taken and freed); every other stream is refused
  expect(slow.opened).toBe(3)
  expect(slow.refused).toBe(17)
  const meanwhile = another(s.server.port as number)
  expect((await meanwhile.first).code).toBe(8) // RESOURCE_EXHAUSTED, while the slow streams hold the budget
  slow.leave()
  while (s.server.streamCount() > 1) await Bun.sleep(5)
  const after = another(s.server.port as number)
  expect((await after.first).document).toBe(doc)
  for (const c of [meanwhile, after]) c.close()
  s.client.close()
})
