/**
 * The attacks of one unauthenticated client on the evaluation and sync ports
 * (docs/openfeature.md#limits), each driven to its end: what the attacker saw (its connection
 * closed, a GOAWAY or RST_STREAM, a status) is answered for the test to judge. The tests
 * (test/e2e/rpc-attacks.test.ts) and the bench (bench/rpc-attacks.ts) run the same attacks, the
 * tests asserting the outcome, the bench measuring memory and /health meanwhile.
 */

import { connect } from 'node:http2'
import { gzipSync } from 'node:zlib'
import { credentials, Metadata, makeGenericClientConstructor } from '@grpc/grpc-js'
import { evaluationMethod } from '../../src/sync/evaluation-protocol.ts'
import { FLAG_SYNC_SERVICE } from '../../src/sync/sync-protocol.ts'
import {
  FLAG,
  FRAME,
  type Frame,
  frame,
  grpcHeaders,
  headerBlock,
  indexed,
  indexedHeaderBlock,
  RawHttp2Client,
  SETTING,
} from './raw-http2-client.ts'

/** Where the attacks go, and the token the sync attack holds (an evaluate token). */
export interface AttackTarget {
  rpcPort: number
  syncPort: number
  token: string
}

/** What the attacker saw. */
export interface AttackOutcome {
  /** The server closed the connection (or refused to accept it). */
  closed: boolean
  /** A GOAWAY's error code, when one came. */
  goAway?: number
  /** RST_STREAM frames received. */
  resets: number
  /** Well-formed answers (HEADERS with `:status 200`… counted as HEADERS frames on streams). */
  answers: number
  /** A gRPC or HTTP status, for the attacks that make calls. */
  status?: number
  /** The text of an HTTP/1.1 answer. */
  text?: string
}

const RESOLVE = '/flagd.evaluation.v2.Service/ResolveBoolean'

const summary = (c: RawHttp2Client, closed: boolean): AttackOutcome => {
  const away = c.frames.find((f) => f.type === FRAME.GOAWAY)
  return {
    closed,
    ...(away ? { goAway: away.payload.readUInt32BE(4) } : {}),
    resets: c.frames.filter((f) => f.type === FRAME.RST_STREAM).length,
    answers: c.frames.filter((f) => f.type === FRAME.HEADERS).length,
  }
}

/** Waits until the connection closes, a frame matching `until` comes, or `ms` passed. */
async function settle(c: RawHttp2Client, until: (f: Frame) => boolean, ms = 10_000): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const closed = await Promise.race([
    c.closed.then(() => true),
    c.next(until).then(() => !c.open),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(!c.open), ms)
    }),
  ])
  clearTimeout(timer)
  return closed
}

/** `block` as a HEADERS frame and the CONTINUATION frames it needs (16 KiB each). */
const headerFrames = (id: number, block: Buffer, endStream = false): Buffer => {
  const last = (at: number) => at + 16_384 >= block.length
  const frames = [frame(FRAME.HEADERS, (last(0) ? FLAG.END_HEADERS : 0) | (endStream ? FLAG.END_STREAM : 0), id, block.subarray(0, 16_384))]
  for (let at = 16_384; at < block.length; at += 16_384)
    frames.push(frame(FRAME.CONTINUATION, last(at) ? FLAG.END_HEADERS : 0, id, block.subarray(at, at + 16_384)))
  return Buffer.concat(frames)
}

/**
 * One header block of 64 kB that decodes to 240 MB: a 4,000-octet field put in the dynamic table,
 * then referenced 60,000 times with one octet each.
 */
export async function hpackBomb(t: AttackTarget): Promise<AttackOutcome> {
  const c = await RawHttp2Client.open(t.rpcPort)
  const block = Buffer.concat([
    headerBlock(grpcHeaders(RESOLVE)),
    indexedHeaderBlock([['x-bomb', 'a'.repeat(4000)]]),
    Buffer.alloc(60_000, indexed(62)),
  ])
  await c.send(headerFrames(1, block, true))
  const closed = await settle(c, (f) => (f.type === FRAME.HEADERS || f.type === FRAME.RST_STREAM || f.type === FRAME.GOAWAY) && f.id <= 1)
  const out = summary(c, closed)
  c.close()
  return out
}

/**
 * A HEADERS frame that never ends, followed by 200,000 empty CONTINUATION frames and a PING: the
 * server answers the PING (it read every frame before it) or ends the connection.
 */
export async function emptyContinuationFlood(t: AttackTarget): Promise<AttackOutcome & { pingAnswered: boolean }> {
  const c = await RawHttp2Client.open(t.rpcPort)
  await c.send(frame(FRAME.HEADERS, 0, 1, headerBlock(grpcHeaders(RESOLVE))))
  const empty = frame(FRAME.CONTINUATION, 0, 1)
  const batch = Buffer.concat(Array.from({ length: 1000 }, () => empty))
  for (let i = 0; i < 200 && c.open; i++) if (!(await c.send(batch))) break
  await c.send(frame(FRAME.PING, 0, 0, Buffer.from('finished')))
  const pong = (f: Frame) => f.type === FRAME.PING && (f.flags & FLAG.ACK) !== 0
  const closed = await settle(c, (f) => f.type === FRAME.GOAWAY || pong(f), 60_000)
  const out = { ...summary(c, closed), pingAnswered: c.frames.some(pong) }
  c.close()
  return out
}

/**
 * 4 MB of tiny calls (each HEADERS block 7 octets: every field indexed in the dynamic table, no
 * body, no credential) to a server whose answers this client never reads.
 */
export async function unreadAnswers(t: AttackTarget): Promise<AttackOutcome & { stalled: boolean }> {
  const c = await RawHttp2Client.open(t.rpcPort)
  c.stopReading()
  const fields = grpcHeaders(RESOLVE)
  // the first call puts its fields in the table; each later one names them by index (newest is 62)
  await c.send(frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, indexedHeaderBlock(fields)))
  const tiny = Buffer.concat(fields.map((_, i) => indexed(62 + fields.length - 1 - i)))
  let id = 3
  let sent = 0
  let stalled = false
  while (sent < 4_000_000 && c.open) {
    const frames: Buffer[] = []
    for (let i = 0; i < 1000; i++, id += 2) frames.push(frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, id, tiny))
    const chunk = Buffer.concat(frames)
    sent += chunk.length
    // a server that stops taking octets is a server that holds the connection: the attack stops there
    const took = await Promise.race([c.send(chunk), Bun.sleep(5_000).then(() => false)])
    if (!took) {
      stalled = c.open
      break
    }
  }
  const out = { ...summary(c, !c.open), stalled }
  c.close()
  return out
}

// made once: compressing 64 MiB takes the attacker a moment, which must not be counted against the daemon
let bomb: Buffer | undefined
/** A gzip message of about 64 kB that inflates to 64 MiB. */
export const gzipBombMessage = () => {
  bomb ??= gzipSync(Buffer.alloc(64 * 2 ** 20))
  return bomb
}

/** A gzip message that inflates to 64 MiB (past the 4 MiB limit): the gRPC status, and Connect's HTTP status and code. */
export async function gzipBomb(t: AttackTarget): Promise<AttackOutcome & { connectStatus: number; connectCode: string }> {
  const method = evaluationMethod('v2', 'ResolveBoolean')
  const message = gzipBombMessage()
  const envelope = Buffer.concat([Buffer.of(1, 0, 0, 0, 0), message])
  envelope.writeUInt32BE(message.length, 1)
  const session = connect(`http://127.0.0.1:${t.rpcPort}`)
  session.on('error', () => {})
  const status = await new Promise<number | undefined>((resolve) => {
    const call = session.request({
      ...Object.fromEntries(grpcHeaders(method.path, [['grpc-encoding', 'gzip']])),
      authorization: `Bearer ${t.token}`,
    })
    let got: number | undefined
    call.on('response', (h) => {
      if (h['grpc-status'] !== undefined) got = Number(h['grpc-status'])
    })
    call.on('trailers', (h) => {
      got = Number(h['grpc-status'])
    })
    call.on('data', () => {})
    call.on('close', () => resolve(got))
    call.on('error', () => resolve(got))
    call.end(envelope)
  })
  const closed = session.closed || session.destroyed
  session.close()
  const answer = await fetch(`http://127.0.0.1:${t.rpcPort}${method.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/proto', 'content-encoding': 'gzip', authorization: `Bearer ${t.token}` },
    body: message,
  })
  const code = ((await answer.json()) as { code: string }).code
  return { closed, resets: 0, answers: 1, ...(status === undefined ? {} : { status }), connectStatus: answer.status, connectCode: code }
}

/** Request bodies sent past the flow-control window on 100 streams, none of them ended. */
export async function bodiesPastTheWindow(t: AttackTarget): Promise<AttackOutcome> {
  const c = await RawHttp2Client.open(t.rpcPort)
  const block = headerBlock(grpcHeaders(RESOLVE))
  const chunk = Buffer.alloc(16_384)
  for (let s = 0; s < 100 && c.open; s++) {
    const id = 1 + 2 * s
    await c.send(frame(FRAME.HEADERS, FLAG.END_HEADERS, id, block))
    // 4 MiB per stream, far past the 64 KiB window nobody granted
    for (let i = 0; i < 256 && c.open; i++) if (!(await c.send(frame(FRAME.DATA, 0, id, chunk)))) break
  }
  const closed = await settle(c, (f) => f.type === FRAME.GOAWAY || f.type === FRAME.RST_STREAM, 5_000)
  const out = summary(c, closed)
  c.close()
  return out
}

/** 1,000,000 PINGs from a client that never reads the acknowledgements. */
export async function pingFlood(t: AttackTarget): Promise<AttackOutcome> {
  const c = await RawHttp2Client.open(t.rpcPort)
  c.stopReading()
  const ping = frame(FRAME.PING, 0, 0, Buffer.alloc(8))
  const batch = Buffer.concat(Array.from({ length: 10_000 }, () => ping))
  for (let i = 0; i < 100 && c.open; i++) {
    const took = await Promise.race([c.send(batch), Bun.sleep(5_000).then(() => false)])
    if (!took) break
  }
  const out = summary(c, !c.open)
  c.close()
  return out
}

/** HTTP/1.1 requests that are no Connect call, and malformed ones: the answers' text. */
export async function http1Probes(t: AttackTarget): Promise<{ status: number; type: string | null; body: string }[]> {
  const base = `http://127.0.0.1:${t.rpcPort}`
  const answers = await Promise.all([
    fetch(`${base}/`),
    fetch(`${base}/api/flags`),
    fetch(`${base}/health`),
    fetch(`${base}${RESOLVE}`, { method: 'POST', headers: { 'content-type': 'application/proto' }, body: Buffer.from('\xff\xff') }),
    fetch(`${base}${RESOLVE}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${t.token}` },
      body: '{"flagKey": ',
    }),
  ])
  const out = await Promise.all(answers.map(async (r) => ({ status: r.status, type: r.headers.get('content-type'), body: await r.text() })))
  // a request line no HTTP parser takes
  const raw = await RawHttp2Client.open(t.rpcPort, false)
  await raw.send(Buffer.from('GARBAGE\x00 / HTTP/9\r\n\r\n'))
  await settle(raw, () => false, 5_000)
  out.push({ status: Number(/^HTTP\/1\.1 (\d+)/.exec(raw.text)?.[1] ?? 0), type: null, body: raw.text })
  raw.close()
  return out
}

/**
 * 1,000 SyncFlags streams with one token, 100 on each of 10 connections (HTTP/2's limit a
 * connection), none of them read: how many the server let open and the codes of those it refused.
 */
export async function unreadSyncStreams(t: AttackTarget): Promise<{ opened: number; refused: number; codes: number[] }> {
  const Client = makeGenericClientConstructor(FLAG_SYNC_SERVICE, 'FlagSyncService')
  const metadata = new Metadata()
  metadata.set('authorization', `Bearer ${t.token}`)
  const codes: number[] = []
  let opened = 0
  let settled: () => void = () => {}
  const all = new Promise<void>((resolve) => {
    settled = resolve
  })
  const count = () => opened + codes.length === 1000 && settled()
  type Call = { on(e: string, f: (x: never) => void): void; pause(): void; cancel(): void }
  const clients = Array.from(
    { length: 10 },
    () =>
      new Client(`127.0.0.1:${t.syncPort}`, credentials.createInsecure(), { 'grpc.use_local_subchannel_pool': 1 }) as unknown as {
        syncFlags(r: object, m: Metadata): Call
        close(): void
      },
  )
  const calls = clients.flatMap((client) =>
    Array.from({ length: 100 }, () => {
      const call = client.syncFlags({ providerId: '', selector: '' }, metadata)
      call.pause() // never read: what the server writes waits
      // headers come with the first document; a refusal is trailers only (its status, read or not)
      call.on('metadata', () => {
        opened++
        count()
      })
      call.on('status', (s: { code: number }) => {
        if (s.code === 0) return
        codes.push(s.code)
        count()
      })
      call.on('error', () => {})
      return call
    }),
  )
  await all
  const result = { opened, refused: codes.length, codes: [...new Set(codes)] }
  for (const call of calls) call.cancel()
  for (const client of clients) client.close()
  return result
}

/** What a client that grants no window saw of its SyncFlags streams, with its connections still open. */
export interface WithheldStreams {
  /** Streams whose answer began (the server holds a document for each). */
  opened: number
  /** Streams refused: trailers only (a gRPC status) or RST_STREAM. */
  refused: number
  /** Streams neither opened nor refused when the wait ended. */
  unanswered: number
  /** Connections the server closed. */
  closed: number
  /** Closes every connection (the attacker leaves). */
  leave(): void
}

/**
 * `connections` connections that each open `streams` SyncFlags streams with `token` and grant no
 * window (SETTINGS_INITIAL_WINDOW_SIZE 0, never a WINDOW_UPDATE): the server can send headers but
 * not one octet of a document, so whatever it writes waits in its own memory. Frames are read (a
 * client that stops reading the socket is `unreadAnswers`). Waits until every stream is opened or
 * refused, or its connection closed; the connections stay open until `leave()`.
 */
export async function withheldSyncStreams(t: AttackTarget, connections: number, streams: number): Promise<WithheldStreams> {
  const block = headerBlock(grpcHeaders('/flagd.sync.v1.FlagSyncService/SyncFlags', [['authorization', `Bearer ${t.token}`]]))
  const emptyRequest = Buffer.alloc(5) // an uncompressed message of no octets: SyncFlagsRequest with every field unset
  const clients = await Promise.all(
    Array.from({ length: connections }, () => RawHttp2Client.open(t.syncPort, true, { [SETTING.INITIAL_WINDOW_SIZE]: 0 })),
  )
  await Promise.all(
    clients.map(async (c) => {
      await c.next((f) => f.type === FRAME.SETTINGS && (f.flags & FLAG.ACK) === 0)
      await c.send(frame(FRAME.SETTINGS, FLAG.ACK, 0))
      for (let s = 0; s < streams && c.open; s++) {
        const id = 1 + 2 * s
        await c.send(
          Buffer.concat([frame(FRAME.HEADERS, FLAG.END_HEADERS, id, block), frame(FRAME.DATA, FLAG.END_STREAM, id, emptyRequest)]),
        )
      }
      const answered = () => {
        const o = c.streamOutcomes()
        return o.opened.length + o.refused.length >= streams
      }
      // every stream is answered or refused, or the server closes the connection: each frame it sends
      // is a look (a server that holds a stream forever is the caller's time-out to find)
      while (c.open && !answered()) await c.more()
    }),
  )
  const outcomes = clients.map((c) => c.streamOutcomes())
  const opened = outcomes.reduce((n, o) => n + o.opened.length, 0)
  const refused = outcomes.reduce((n, o) => n + o.refused.length, 0)
  return {
    opened,
    refused,
    unanswered: connections * streams - opened - refused,
    closed: clients.filter((c) => !c.open).length,
    leave: () => {
      for (const c of clients) c.close()
    },
  }
}

/** A frame of the wrong size, on the wrong stream, or a header list HTTP/2 calls malformed (RFC 9113 §8.2). */
const VIOLATIONS: [string, (block: Buffer) => Buffer][] = [
  ['HEADERS on an even (server-initiated) stream', (b) => frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 2, b)],
  ['DATA on stream 0', () => frame(FRAME.DATA, 0, 0, Buffer.alloc(8))],
  ['DATA on a stream never opened', () => frame(FRAME.DATA, FLAG.END_STREAM, 5, Buffer.alloc(8))],
  [
    'an upper-case header name',
    () => frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, headerBlock(grpcHeaders(RESOLVE, [['X-Upper', '1']]))),
  ],
  [
    'no :path',
    () => frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, headerBlock(grpcHeaders(RESOLVE).filter(([n]) => n !== ':path'))),
  ],
  [
    'a connection-specific header',
    () => frame(FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, 1, headerBlock(grpcHeaders(RESOLVE, [['connection', 'keep-alive']]))),
  ],
  [
    'a pseudo-header after a regular one',
    () =>
      frame(
        FRAME.HEADERS,
        FLAG.END_HEADERS | FLAG.END_STREAM,
        1,
        headerBlock([['te', 'trailers'], ...grpcHeaders(RESOLVE).filter(([n]) => n !== 'te')]),
      ),
  ],
  ['SETTINGS_ENABLE_PUSH of 2', () => frame(FRAME.SETTINGS, 0, 0, Buffer.from([0, 2, 0, 0, 0, 2]))],
  ['a WINDOW_UPDATE of 0', () => frame(FRAME.WINDOW_UPDATE, 0, 0, Buffer.alloc(4))],
  [
    'a DATA frame past the maximum frame size',
    (b) => Buffer.concat([frame(FRAME.HEADERS, FLAG.END_HEADERS, 1, b), frame(FRAME.DATA, 0, 1, Buffer.alloc(16_385))]),
  ],
]

/**
 * Each of the protocol violations above on a connection of its own: what the server did (a GOAWAY,
 * a reset, the connection closed) and whether it answered the call as if it were well-formed
 * (a HEADERS frame on a client stream).
 */
export async function protocolViolations(t: AttackTarget): Promise<{ violation: string; refused: boolean; answered: boolean }[]> {
  const block = headerBlock(grpcHeaders(RESOLVE))
  return Promise.all(
    VIOLATIONS.map(async ([violation, bytes]) => {
      const c = await RawHttp2Client.open(t.rpcPort)
      await c.send(bytes(block))
      const closed = await settle(
        c,
        (f) => f.type === FRAME.GOAWAY || f.type === FRAME.RST_STREAM || (f.type === FRAME.HEADERS && f.id % 2 === 1),
        10_000,
      )
      const out = summary(c, closed)
      c.close()
      return { violation, refused: out.closed || out.goAway !== undefined || out.resets > 0, answered: out.answers > 0 }
    }),
  )
}

/**
 * A migration file of 6,000 STRING flags with values of 400 characters, stamped `createdAt`: its
 * flagd document is about 3 MB, far past the window a client grants before it reads.
 */
export function largeSyncDocument(createdAt: string): Record<string, unknown> {
  const flags: Record<string, unknown> = {}
  for (let i = 0; i < 6000; i++)
    flags[`app/g${i % 20}/f${i}`] = {
      description: 'bench flag',
      type: 'STRING',
      defaultValue: 'a',
      valueExists: true,
      value: 'v'.repeat(400),
    }
  return { environment: 'bench', version: '1.0.0', createdAt, flags }
}
