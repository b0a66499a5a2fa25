/**
 * An HTTP/2 client that writes frames by hand, for what well-behaved clients never do (floods,
 * oversized header blocks, bodies past the window, a client that stops reading). Header blocks are
 * HPACK literals without indexing or Huffman coding, which every decoder must take. Frames the
 * server sends are parsed only for their type, flags and stream.
 */

import { connect, type Socket } from 'node:net'

/** A frame the server sent. */
export interface Frame {
  type: number
  flags: number
  id: number
  payload: Buffer
}

/** Frame types. */
export const FRAME = { DATA: 0, HEADERS: 1, RST_STREAM: 3, SETTINGS: 4, PING: 6, GOAWAY: 7, WINDOW_UPDATE: 8, CONTINUATION: 9 } as const
/** SETTINGS identifiers (RFC 9113 §6.5.2). */
export const SETTING = { MAX_CONCURRENT_STREAMS: 3, INITIAL_WINDOW_SIZE: 4 } as const
/** Frame flags. */
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4 } as const

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n')

/** An HPACK integer with an `n`-bit prefix (RFC 7541 §5.1) after `first`'s high bits. */
function integer(value: number, n: number, first = 0): Buffer {
  const max = (1 << n) - 1
  if (value < max) return Buffer.of(first | value)
  const out = [first | max]
  let rest = value - max
  while (rest >= 128) {
    out.push((rest % 128) + 128)
    rest = Math.floor(rest / 128)
  }
  out.push(rest)
  return Buffer.from(out)
}

/** A header block of literal fields without indexing. */
export function headerBlock(fields: readonly (readonly [string, string])[]): Buffer {
  const parts: Buffer[] = []
  for (const [name, value] of fields) {
    const n = Buffer.from(name)
    const v = Buffer.from(value)
    parts.push(Buffer.of(0), integer(n.length, 7), n, integer(v.length, 7), v)
  }
  return Buffer.concat(parts)
}

/** A header block of literal fields each added to the server's dynamic table (RFC 7541 §6.2.1). */
export function indexedHeaderBlock(fields: readonly (readonly [string, string])[]): Buffer {
  const parts: Buffer[] = []
  for (const [name, value] of fields) {
    const n = Buffer.from(name)
    const v = Buffer.from(value)
    parts.push(Buffer.of(0x40), integer(n.length, 7), n, integer(v.length, 7), v)
  }
  return Buffer.concat(parts)
}

/** A field of the dynamic table by index (62 is the newest entry), one octet for indexes below 127. */
export const indexed = (index: number) => integer(index, 7, 0x80)

/** The headers of a gRPC call to `path`. */
export const grpcHeaders = (path: string, extra: [string, string][] = []): [string, string][] => [
  [':method', 'POST'],
  [':scheme', 'http'],
  [':path', path],
  [':authority', 'localhost'],
  ['content-type', 'application/grpc'],
  ['te', 'trailers'],
  ...extra,
]

/** A frame. */
export function frame(type: number, flags: number, id: number, payload: Uint8Array = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9)
  head.writeUIntBE(payload.length, 0, 3)
  head[3] = type
  head[4] = flags
  head.writeUInt32BE(id, 5)
  return Buffer.concat([head, payload])
}

/** A connection (see module comment). */
export class RawHttp2Client {
  readonly frames: Frame[] = []
  /** Octets the server sent, as latin1 text (HTTP/1.1 answers). */
  text = ''
  /** Resolves when the connection is closed, by either side. */
  readonly closed: Promise<void>
  private buffered = Buffer.alloc(0)
  private readonly waiters: (() => void)[] = []

  private constructor(
    private readonly socket: Socket,
    closed: Promise<void>,
  ) {
    this.closed = closed
    socket.on('data', (d: Buffer) => this.receive(d))
  }

  /**
   * Connects; with `preface`, sends the client preface and SETTINGS (`settings`: identifier → value,
   * e.g. {@link SETTING}.INITIAL_WINDOW_SIZE 0 for a client that grants no stream any window).
   */
  static async open(port: number, preface = true, settings: Record<number, number> = {}): Promise<RawHttp2Client> {
    const socket = connect({ host: '127.0.0.1', port })
    socket.on('error', () => {})
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()))
    await new Promise<void>((resolve, reject) => {
      socket.once('connect', resolve)
      socket.once('error', reject)
    })
    const c = new RawHttp2Client(socket, closed)
    if (preface) {
      const pairs = Object.entries(settings).map(([id, value]) => {
        const pair = Buffer.alloc(6)
        pair.writeUInt16BE(Number(id), 0)
        pair.writeUInt32BE(value, 2)
        return pair
      })
      c.send(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0, Buffer.concat(pairs))]))
    }
    return c
  }

  /** Writes `bytes`; resolves when the socket took them (false once it is closed). */
  send(bytes: Uint8Array): Promise<boolean> {
    if (this.socket.destroyed) return Promise.resolve(false)
    return new Promise((resolve) => {
      if (this.socket.write(bytes)) resolve(true)
      else {
        const done = () => {
          this.socket.off('drain', done)
          this.socket.off('close', done)
          resolve(!this.socket.destroyed)
        }
        this.socket.once('drain', done)
        this.socket.once('close', done)
      }
    })
  }

  /** True while the connection is open. */
  get open(): boolean {
    return !this.socket.destroyed
  }

  /** Stops reading what the server sends (its output then waits in its own buffers). */
  stopReading(): void {
    this.socket.pause()
  }

  private receive(d: Buffer): void {
    if (this.text.length < 100_000) this.text += d.toString('latin1')
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

  /** The first frame that matches, once it arrived; undefined when the connection closed first. */
  async next(match: (f: Frame) => boolean): Promise<Frame | undefined> {
    let open = true
    void this.closed.then(() => {
      open = false
      for (const w of this.waiters.splice(0)) w()
    })
    for (;;) {
      const found = this.frames.find(match)
      if (found || !open) return found
      await new Promise<void>((resolve) => this.waiters.push(resolve))
    }
  }

  /** Resolves when more octets arrive or the connection closes. */
  more(): Promise<void> {
    if (!this.open) return Promise.resolve()
    return new Promise<void>((resolve) => {
      this.waiters.push(resolve)
      void this.closed.then(resolve)
    })
  }

  /** Streams whose answer began (HEADERS without END_STREAM), and those refused (trailers only, or RST_STREAM). */
  streamOutcomes(): { opened: number[]; refused: number[] } {
    const opened = new Set<number>()
    const refused = new Set<number>()
    for (const f of this.frames) {
      if (f.id === 0) continue
      if (f.type === FRAME.HEADERS && (f.flags & FLAG.END_STREAM) === 0) opened.add(f.id)
      else if ((f.type === FRAME.HEADERS || f.type === FRAME.RST_STREAM) && !opened.has(f.id)) refused.add(f.id)
    }
    return { opened: [...opened], refused: [...refused] }
  }

  /** Closes the connection. */
  close(): void {
    this.socket.destroy()
  }
}
