/**
 * The evaluation service's gRPC server (src/sync/rpc-server) against real HTTP/2 implementations:
 * grpc-js on Bun's client, Node's nghttp2 with a tiny flow-control window, and raw frames for what
 * clients rarely do (one octet at a time, padding, CONTINUATION, PING, mistakes). Python's grpcio
 * (gRPC's C core) is in test/e2e/rpc-clients.test.ts.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { credentials, Metadata, makeGenericClientConstructor, status } from '@grpc/grpc-js'
import { type GrpcListener, type GrpcMethod, type GrpcWriter, listenGrpc } from '../../src/sync/rpc-server/grpc-server.ts'
import { headerBlock } from '../../src/sync/rpc-server/header-block.ts'
import { HpackDecoder } from '../../src/sync/rpc-server/hpack-decoder.ts'

const raw = { decode: (b: Uint8Array) => ({ bytes: Buffer.from(b) }), encode: (m: object) => (m as { bytes: Uint8Array }).bytes }
const closedWatches: string[] = []
const closeWaiters = new Map<string, () => void>()
const METHODS = new Map<string, GrpcMethod>([
  ['/t.S/Echo', { ...raw, kind: 'unary', handle: (r) => r }],
  ['/t.S/Later', { ...raw, kind: 'unary', handle: async (r) => r }],
  ['/t.S/Big', { ...raw, kind: 'unary', handle: () => ({ bytes: Buffer.alloc(300_000, 7) }) }],
  ['/t.S/Fail', { ...raw, kind: 'unary', handle: () => Promise.reject({ code: status.PERMISSION_DENIED, details: 'nope: ü 100%' }) }],
  [
    '/t.S/Crash',
    {
      ...raw,
      kind: 'unary',
      handle: () => {
        throw new Error('boom')
      },
    },
  ],
  [
    '/t.S/Watch',
    {
      ...raw,
      kind: 'stream',
      handle: (r, _m, call: GrpcWriter) => {
        const text = Buffer.from((r as { bytes: Uint8Array }).bytes).toString()
        call.onClose(() => {
          closedWatches.push(text)
          closeWaiters.get(text)?.()
        })
        for (let i = 0; i < 3; i++) call.write({ bytes: Buffer.from(`${text}-${i}`) })
        if (!text.startsWith('forever')) call.end()
      },
    },
  ],
])

let server: GrpcListener
let address: string
beforeAll(() => {
  server = listenGrpc({ hostname: '127.0.0.1', port: 0 }, METHODS)
  address = `127.0.0.1:${server.port}`
})
afterAll(() => server.close())

const id = (b: Buffer) => b
const method = (path: string, responseStream = false) => ({
  path,
  requestStream: false,
  responseStream,
  requestSerialize: id,
  requestDeserialize: id,
  responseSerialize: id,
  responseDeserialize: id,
})
const Client = makeGenericClientConstructor(
  {
    Echo: method('/t.S/Echo'),
    Later: method('/t.S/Later'),
    Big: method('/t.S/Big'),
    Fail: method('/t.S/Fail'),
    Crash: method('/t.S/Crash'),
    Missing: method('/t.S/Missing'),
    Watch: method('/t.S/Watch', true),
  },
  'S',
)
type Unary = (r: Buffer, m: Metadata, done: (e: (Error & { code: number; details: string }) | null, a?: Buffer) => void) => void
const call = (c: Record<string, Unary>, name: string, body: Buffer) =>
  new Promise<{ error?: { code: number; details: string }; answer?: Buffer }>((resolve) =>
    c[name]?.call(c, body, new Metadata(), (error, answer) => resolve(error ? { error } : { answer })),
  )

test('grpc-js: unary answers, sync and async, large ones through the window, statuses with their messages', async () => {
  const c = new Client(address, credentials.createInsecure()) as unknown as Record<string, Unary> & { close(): void }
  try {
    expect((await call(c, 'Echo', Buffer.from('hello'))).answer?.toString()).toBe('hello')
    expect((await call(c, 'Later', Buffer.from('later'))).answer?.toString()).toBe('later')
    expect((await call(c, 'Echo', Buffer.alloc(0))).answer?.length).toBe(0)
    const big = await call(c, 'Big', Buffer.alloc(0))
    expect(big.answer?.length).toBe(300_000)
    expect(big.answer?.every((b) => b === 7)).toBe(true)
    expect((await call(c, 'Fail', Buffer.from('x'))).error).toMatchObject({ code: status.PERMISSION_DENIED, details: 'nope: ü 100%' })
    expect((await call(c, 'Crash', Buffer.from('x'))).error).toMatchObject({ code: status.INTERNAL, details: 'boom' })
    expect((await call(c, 'Missing', Buffer.from('x'))).error).toMatchObject({ code: status.UNIMPLEMENTED })
    // many calls in flight on the one connection
    const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => call(c, 'Echo', Buffer.from(`n${i}`))))
    expect(answers.map((a) => a.answer?.toString())).toEqual(Array.from({ length: 200 }, (_, i) => `n${i}`))
  } finally {
    c.close()
  }
})

test('grpc-js: a server stream sends its messages and ends; a client cancelling one closes it here', async () => {
  const c = new Client(address, credentials.createInsecure()) as unknown as {
    Watch(r: Buffer, m: Metadata): NodeJS.EventEmitter & { cancel(): void }
    close(): void
  }
  try {
    const got: string[] = []
    const s = c.Watch(Buffer.from('w'), new Metadata())
    s.on('data', (b: Buffer) => got.push(b.toString()))
    await new Promise((resolve, reject) => {
      s.on('end', resolve)
      s.on('error', reject)
    })
    expect(got).toEqual(['w-0', 'w-1', 'w-2'])

    const forever = c.Watch(Buffer.from('forever'), new Metadata())
    forever.on('error', () => {})
    await new Promise<void>((resolve) => {
      let n = 0
      forever.on('data', () => ++n === 3 && resolve())
    })
    const closed = new Promise<void>((resolve) => closeWaiters.set('forever', resolve))
    forever.cancel()
    await closed
    expect(closedWatches).toContain('forever')
  } finally {
    c.close()
  }
})

/** A client that writes HTTP/2 frames by hand and reads the server's frames back. */
class RawClient {
  readonly frames: { type: number; flags: number; id: number; payload: Buffer }[] = []
  text = ''
  private buffered = Buffer.alloc(0)
  private readonly waiters: (() => void)[] = []
  private socket!: Awaited<ReturnType<typeof Bun.connect>>
  readonly closed: Promise<void>
  private onClosed!: () => void

  constructor() {
    this.closed = new Promise((resolve) => {
      this.onClosed = resolve
    })
  }

  static async open(port: number, preface = true): Promise<RawClient> {
    const c = new RawClient()
    c.socket = await Bun.connect({
      hostname: '127.0.0.1',
      port,
      socket: {
        data: (_s, d) => c.receive(d),
        drain: () => c.drain(),
        close: () => c.onClosed(),
      },
    })
    if (preface) c.send(Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), RawClient.frame(4, 0, 0, Buffer.alloc(0))]))
    return c
  }

  static frame(type: number, flags: number, id: number, payload: Uint8Array): Buffer {
    const head = Buffer.alloc(9)
    head.writeUIntBE(payload.length, 0, 3)
    head[3] = type
    head[4] = flags
    head.writeUInt32BE(id, 5)
    return Buffer.concat([head, payload])
  }

  private backlog: Uint8Array[] = []

  /** Writes `bytes`, keeping what the socket cannot take yet for its `drain`. */
  send(bytes: Uint8Array, oneOctetAtATime = false): void {
    if (oneOctetAtATime) for (const b of bytes) this.backlog.push(Uint8Array.of(b))
    else this.backlog.push(bytes)
    this.drain()
  }

  private drain(): void {
    while (this.backlog.length > 0) {
      const next = this.backlog[0] as Uint8Array
      const written = this.socket.write(next)
      if (written < next.length) {
        this.backlog[0] = next.subarray(Math.max(0, written))
        return
      }
      this.backlog.shift()
    }
  }

  private receive(d: Buffer): void {
    this.text += d.toString('latin1')
    this.buffered = Buffer.concat([this.buffered, d])
    while (this.buffered.length >= 9) {
      const length = this.buffered.readUIntBE(0, 3)
      if (this.buffered.length < 9 + length) break
      this.frames.push({
        type: this.buffered[3] as number,
        flags: this.buffered[4] as number,
        id: this.buffered.readUInt32BE(5) & 0x7fffffff,
        payload: this.buffered.subarray(9, 9 + length),
      })
      this.buffered = this.buffered.subarray(9 + length)
    }
    for (const w of this.waiters.splice(0)) w()
  }

  /** The first frame that matches, once it has arrived. */
  async next(match: (f: RawClient['frames'][number]) => boolean) {
    for (;;) {
      const found = this.frames.find(match)
      if (found) return found
      await new Promise<void>((resolve) => this.waiters.push(resolve))
    }
  }

  close(): void {
    this.socket.end()
  }
}

const GRPC_HEADERS = (path: string): [string, string][] => [
  [':method', 'POST'],
  [':scheme', 'http'],
  [':path', path],
  [':authority', 'localhost'],
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
]
const message = (text: string) => {
  const body = Buffer.from(text)
  const out = Buffer.alloc(5 + body.length)
  out.writeUInt32BE(body.length, 1)
  body.copy(out, 5)
  return out
}

test('raw frames, one octet at a time: padded HEADERS with priority, a CONTINUATION, then DATA', async () => {
  const c = await RawClient.open(server.port as number)
  try {
    const block = headerBlock(GRPC_HEADERS('/t.S/Echo'))
    const first = block.subarray(0, 10)
    // PADDED (0x8) and PRIORITY (0x20): pad length 3, five octets of priority, the fragment, the padding
    const headers = Buffer.concat([Uint8Array.of(3), Buffer.alloc(5), first, Buffer.alloc(3)])
    c.send(
      Buffer.concat([
        RawClient.frame(1, 0x8 | 0x20, 1, headers),
        RawClient.frame(9, 0x4, 1, block.subarray(10)),
        RawClient.frame(0, 0x1, 1, message('slowly')),
      ]),
      true,
    )
    const trailers = await c.next((f) => f.type === 1 && f.id === 1 && (f.flags & 0x1) !== 0)
    const decoder = new HpackDecoder()
    const response = c.frames.filter((f) => f.id === 1)
    expect(response.map((f) => f.type)).toEqual([1, 0, 1])
    expect(decoder.decode(response[0]?.payload as Buffer)).toContainEqual([':status', '200'])
    expect(response[1]?.payload.subarray(5).toString()).toBe('slowly')
    expect(decoder.decode(trailers.payload)).toContainEqual(['grpc-status', '0'])
    expect(c.frames.some((f) => f.type === 4 && f.flags === 1)).toBe(true) // our SETTINGS acknowledged
  } finally {
    c.close()
  }
})

test('raw frames: PING is answered; a wrong content type is 415; a request over 4 MiB is RESOURCE_EXHAUSTED', async () => {
  const c = await RawClient.open(server.port as number)
  try {
    c.send(RawClient.frame(6, 0, 0, Buffer.from('12345678')))
    const pong = await c.next((f) => f.type === 6 && f.flags === 1)
    expect(pong.payload.toString()).toBe('12345678')

    const plain = GRPC_HEADERS('/t.S/Echo').map(([k, v]): [string, string] => (k === 'content-type' ? [k, 'text/plain'] : [k, v]))
    c.send(RawClient.frame(1, 0x4 | 0x1, 1, headerBlock(plain)))
    const refused = await c.next((f) => f.type === 1 && f.id === 1)
    expect(new HpackDecoder().decode(refused.payload)).toContainEqual([':status', '415'])

    c.send(RawClient.frame(1, 0x4, 3, headerBlock(GRPC_HEADERS('/t.S/Echo'))))
    const chunk = Buffer.alloc(16_384)
    for (let sent = 0; sent <= 4 * 1024 * 1024; sent += chunk.length) c.send(RawClient.frame(0, 0, 3, chunk))
    const status3 = await c.next((f) => f.type === 1 && f.id === 3)
    const headers = new HpackDecoder()
    headers.decode(refused.payload)
    expect(headers.decode(status3.payload)).toContainEqual(['grpc-status', String(status.RESOURCE_EXHAUSTED)])
    await c.next((f) => f.type === 3 && f.id === 3) // and the rest of the request is stopped (RST_STREAM)
  } finally {
    c.close()
  }
})

test('raw frames: mistakes end the connection with GOAWAY naming them; an HTTP/1.1 GET is told what the port speaks', async () => {
  const big = await RawClient.open(server.port as number)
  big.send(RawClient.frame(0, 0, 1, Buffer.alloc(20_000)))
  const away = await big.next((f) => f.type === 7)
  expect(away.payload.readUInt32BE(4)).toBe(0x6) // FRAME_SIZE_ERROR
  await big.closed

  const bad = await RawClient.open(server.port as number)
  bad.send(RawClient.frame(1, 0x5, 1, Uint8Array.of(0xbe))) // index 62 of an empty table
  const compression = await bad.next((f) => f.type === 7)
  expect(compression.payload.readUInt32BE(4)).toBe(0x9) // COMPRESSION_ERROR
  await bad.closed

  // HTTP/1.1 is the Connect protocol's: a GET is no call, and the answer says what the port speaks
  const h1 = await RawClient.open(server.port as number, false)
  h1.send(Buffer.from('GET / HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n'))
  await h1.closed
  expect(h1.text).toStartWith('HTTP/1.1 405')
  expect(h1.text).toContain('gRPC over HTTP/2 (prior knowledge), or the Connect protocol over HTTP/1.1')
})

test("Node's nghttp2 client with a 1,000-octet window gets a 300 kB answer whole, and sends a 100 kB request in pieces", async () => {
  const script = `
    const http2 = require('node:http2')
    const s = http2.connect('http://${address}', { settings: { initialWindowSize: 1000 } })
    const ask = (path, body) => new Promise((resolve) => {
      const r = s.request({ ':method': 'POST', ':path': path, 'content-type': 'application/grpc', te: 'trailers' })
      const chunks = []
      let trailers = {}
      r.on('data', (c) => chunks.push(c))
      r.on('trailers', (t) => { trailers = t })
      r.on('end', () => resolve({ length: Buffer.concat(chunks).length, status: trailers['grpc-status'] }))
      for (let i = 0; i < body.length; i += 7000) r.write(body.subarray(i, i + 7000))
      r.end()
    })
    const body = Buffer.alloc(5 + 100000, 1); body[0] = 0; body.writeUInt32BE(100000, 1)
    Promise.all([ask('/t.S/Big', Buffer.from([0, 0, 0, 0, 0])), ask('/t.S/Echo', body)]).then((r) => {
      console.log(JSON.stringify(r)); s.close()
    })
  `
  const node = Bun.spawn(['node', '-e', script], { stdout: 'pipe', stderr: 'pipe' })
  const out = await new Response(node.stdout).text()
  expect(await node.exited, await new Response(node.stderr).text()).toBe(0)
  expect(JSON.parse(out)).toEqual([
    { length: 5 + 300_000, status: '0' },
    { length: 5 + 100_000, status: '0' },
  ])
})

test('a port already taken is refused naming the address, with the reason', () => {
  expect(() => listenGrpc({ hostname: '127.0.0.1', port: server.port as number }, METHODS)).toThrow(
    `cannot listen on 127.0.0.1:${server.port} (EADDRINUSE)`,
  )
})

test("pings find HTTP/2 peers that stopped answering; HTTP/1.1 connections are left to the kernel's keepalive", async () => {
  const quick = listenGrpc({ hostname: '127.0.0.1', port: 0 }, METHODS, { keepaliveMs: 50 })
  const abort = new AbortController()
  try {
    // a Connect event stream over HTTP/1.1 that stays open
    const body = Buffer.concat([Uint8Array.of(0, 0, 0, 0, 10), Buffer.from('forever-h1')])
    const res = await fetch(`http://127.0.0.1:${quick.port}/t.S/Watch`, {
      method: 'POST',
      headers: { 'content-type': 'application/connect+proto' },
      body,
      signal: abort.signal,
    })
    await (res.body as ReadableStream<Uint8Array>).getReader().read()
    // an HTTP/2 client that never answers a PING is closed at the tick after the first one
    const silent = await RawClient.open(quick.port as number)
    await silent.next((f) => f.type === 6 && f.flags === 0)
    await silent.closed
    expect(closedWatches).not.toContain('forever-h1')
  } finally {
    abort.abort()
    await quick.close()
  }
})

test('a connection that says nothing is closed after firstBytesSeconds', async () => {
  const strict = listenGrpc({ hostname: '127.0.0.1', port: 0 }, METHODS, { firstBytesSeconds: 1 })
  try {
    const mute = await RawClient.open(strict.port as number, false)
    await mute.closed
    expect(mute.text).toBe('')
  } finally {
    await strict.close()
  }
})

test('a Connect event stream the client drops is closed here too, through the bridge', async () => {
  const abort = new AbortController()
  const body = Buffer.concat([Uint8Array.of(0, 0, 0, 0, 15), Buffer.from('forever-dropped')])
  const res = await fetch(`http://${address}/t.S/Watch`, {
    method: 'POST',
    headers: { 'content-type': 'application/connect+proto' },
    body,
    signal: abort.signal,
  })
  await (res.body as ReadableStream<Uint8Array>).getReader().read()
  const closed = new Promise<void>((resolve) => closeWaiters.set('forever-dropped', resolve))
  abort.abort()
  await closed
  expect(closedWatches).toContain('forever-dropped')
})

test('gzip messages: grpc-js compressing its requests, Connect unary and stream bodies; another encoding is UNIMPLEMENTED', async () => {
  const gzipping = new Client(address, credentials.createInsecure(), {
    'grpc.default_compression_algorithm': 2, // gzip
  }) as unknown as Record<string, Unary> & { close(): void }
  try {
    expect((await call(gzipping, 'Echo', Buffer.from('squeezed'.repeat(100)))).answer?.toString()).toBe('squeezed'.repeat(100))
  } finally {
    gzipping.close()
  }
  const unary = await fetch(`http://${address}/t.S/Echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/proto', 'content-encoding': 'gzip' },
    body: Bun.gzipSync(Buffer.from('unary, gzipped')),
  })
  expect(Buffer.from(await unary.arrayBuffer()).toString()).toBe('unary, gzipped')
  const message = Bun.gzipSync(Buffer.from('stream, gzipped'))
  const streamed = await fetch(`http://${address}/t.S/Watch`, {
    method: 'POST',
    headers: { 'content-type': 'application/connect+proto', 'connect-content-encoding': 'gzip' },
    body: Buffer.concat([Uint8Array.of(1, 0, 0, (message.length >> 8) & 0xff, message.length & 0xff), message]),
  })
  expect(Buffer.from(await streamed.arrayBuffer()).toString('latin1')).toContain('stream, gzipped-0')
  // a compressed message in an encoding this server does not speak
  const c = await RawClient.open(server.port as number)
  try {
    c.send(RawClient.frame(1, 0x4, 1, headerBlock([...GRPC_HEADERS('/t.S/Echo'), ['grpc-encoding', 'deflate']])))
    c.send(RawClient.frame(0, 0x1, 1, Buffer.concat([Uint8Array.of(1, 0, 0, 0, 3), Buffer.from('xyz')])))
    const refused = await c.next((f) => f.type === 1 && f.id === 1)
    expect(new HpackDecoder().decode(refused.payload)).toContainEqual(['grpc-status', String(status.UNIMPLEMENTED)])
  } finally {
    c.close()
  }
})

test('a client opening more than 1,000 calls at once on one connection has the extra one refused (REFUSED_STREAM)', async () => {
  const c = await RawClient.open(server.port as number)
  try {
    const block = headerBlock(GRPC_HEADERS('/t.S/Echo'))
    // 1,001 calls begun and none ended: each holds its stream open
    c.send(Buffer.concat(Array.from({ length: 1001 }, (_, i) => RawClient.frame(1, 0x4, 2 * i + 1, block))))
    const reset = await c.next((f) => f.type === 3)
    expect(reset.id).toBe(2001)
    expect(reset.payload.readUInt32BE(0)).toBe(0x7)
  } finally {
    c.close()
  }
})
