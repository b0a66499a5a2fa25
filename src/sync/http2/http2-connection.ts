/**
 * The server side of one HTTP/2 connection over cleartext with prior knowledge (RFC 9113), which is
 * what gRPC clients speak: frames in, requests out to `onRequest` once the client has ended them,
 * answers framed back within the peer's flow-control windows. Everything a compliant client may
 * send is handled (settings, pings, window updates, resets, padding, priorities, continuations);
 * a protocol mistake ends the connection with GOAWAY naming it. Output is gathered and written once
 * per read, or once per task for answers made later.
 */

import { CompressionError, HpackDecoder } from './hpack-decoder.ts'
import { Http2Stream, type StreamOwner } from './http2-stream.ts'

const DATA = 0x0
const HEADERS = 0x1
const RST_STREAM = 0x3
const SETTINGS = 0x4
const PUSH_PROMISE = 0x5
const PING = 0x6
const GOAWAY = 0x7
const WINDOW_UPDATE = 0x8
const CONTINUATION = 0x9

const END_STREAM = 0x1
const ACK = 0x1
const END_HEADERS = 0x4
const PADDED = 0x8
const PRIORITY = 0x20

/** HTTP/2 error codes (RFC 9113, section 7). */
export const H2_ERROR = {
  NO_ERROR: 0x0,
  PROTOCOL_ERROR: 0x1,
  INTERNAL_ERROR: 0x2,
  FLOW_CONTROL_ERROR: 0x3,
  FRAME_SIZE_ERROR: 0x6,
  REFUSED_STREAM: 0x7,
  COMPRESSION_ERROR: 0x9,
  ENHANCE_YOUR_CALM: 0xb,
} as const

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1')
const DEFAULT_WINDOW = 65_535
const MAX_WINDOW = 2 ** 31 - 1
/** What this side accepts: frame size (the protocol's default), windows, streams, header list. */
const MAX_FRAME = 16_384
const RECEIVE_WINDOW = 1 << 20
const MAX_STREAMS = 1000
const MAX_HEADER_BLOCK = 64 * 1024

/** Where a connection's octets go (the socket, with its own backpressure). */
export interface Http2Sink {
  write(bytes: Uint8Array): void
  end(): void
}

/** A mistake that ends the connection. */
class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

/** Writes a frame's nine-octet header into `to` at `at`. */
function frameHeader(to: Uint8Array, at: number, length: number, type: number, flags: number, id: number): void {
  to[at] = length >>> 16
  to[at + 1] = (length >>> 8) & 0xff
  to[at + 2] = length & 0xff
  to[at + 3] = type
  to[at + 4] = flags
  to[at + 5] = (id >>> 24) & 0x7f
  to[at + 6] = (id >>> 16) & 0xff
  to[at + 7] = (id >>> 8) & 0xff
  to[at + 8] = id & 0xff
}

const u32 = (n: number) => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff)
const readU32 = (b: Uint8Array, at: number) =>
  (((b[at] as number) << 24) | ((b[at + 1] as number) << 16) | ((b[at + 2] as number) << 8) | (b[at + 3] as number)) >>> 0

/** One connection. */
export class Http2Connection implements StreamOwner {
  private readonly decoder = new HpackDecoder()
  private readonly streams = new Map<number, Http2Stream>()
  private readonly blocked = new Set<Http2Stream>()
  private pending: Uint8Array | undefined
  private prefaceSeen = false
  private lastStreamId = 0
  private block: { id: number; endStream: boolean; parts: Uint8Array[]; length: number } | undefined
  private sendWindow = DEFAULT_WINDOW
  private peerWindow = DEFAULT_WINDOW
  private peerMaxFrame = MAX_FRAME
  private unacknowledged = 0
  private out: Uint8Array[] = []
  private reading = false
  private flushQueued = false
  private pingSent = false
  private goingAway = false
  private closed = false

  constructor(
    private readonly sink: Http2Sink,
    private readonly onRequest: (stream: Http2Stream) => void,
    private readonly maxBody: number,
  ) {}

  /** This side's preface, once the client's is read (so an HTTP/1 client is answered in HTTP/1). */
  private sendPreface(): void {
    const settings = [
      [0x3, MAX_STREAMS],
      [0x4, RECEIVE_WINDOW],
      [0x6, MAX_HEADER_BLOCK],
    ].flatMap(([id, value]) => [0, id as number, ...u32(value as number)])
    this.frame(SETTINGS, 0, 0, Uint8Array.from(settings))
    this.frame(WINDOW_UPDATE, 0, 0, u32(RECEIVE_WINDOW - DEFAULT_WINDOW))
  }

  /** Streams open now. */
  get openStreams(): number {
    return this.streams.size
  }

  /** Octets read from the socket. */
  receive(chunk: Uint8Array): void {
    if (this.closed) return
    const data = this.pending === undefined ? chunk : Buffer.concat([this.pending, chunk])
    this.pending = undefined
    this.reading = true
    try {
      let at = 0
      if (!this.prefaceSeen) {
        const seen = Math.min(data.length, PREFACE.length)
        if (!PREFACE.subarray(0, seen).equals(data.subarray(0, seen))) {
          this.notHttp2()
          return
        }
        if (data.length < PREFACE.length) {
          this.pending = data.slice()
          return
        }
        this.prefaceSeen = true
        this.sendPreface()
        at = PREFACE.length
      }
      while (data.length - at >= 9 && !this.closed) {
        const length = ((data[at] as number) << 16) | ((data[at + 1] as number) << 8) | (data[at + 2] as number)
        if (length > MAX_FRAME) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, `a frame of ${length} octets`)
        if (data.length - at < 9 + length) break
        const id = readU32(data, at + 5) & 0x7fffffff
        this.onFrame(data[at + 3] as number, data[at + 4] as number, id, data.subarray(at + 9, at + 9 + length))
        at += 9 + length
      }
      if (at < data.length && !this.closed) this.pending = data.slice(at)
    } catch (err) {
      if (err instanceof ConnectionError) this.fail(err.code, err.message)
      else if (err instanceof CompressionError) this.fail(H2_ERROR.COMPRESSION_ERROR, err.message)
      // a fault of this server: the connection ends, saying so, and the process goes on
      else this.fail(H2_ERROR.INTERNAL_ERROR, `internal error: ${(err as Error)?.message ?? err}`)
    } finally {
      this.reading = false
      this.flush()
    }
  }

  private onFrame(type: number, flags: number, id: number, payload: Uint8Array): void {
    if (this.block !== undefined && type !== CONTINUATION)
      throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a header block was interrupted by another frame')
    switch (type) {
      case DATA:
        this.onData(flags, id, payload)
        return
      case HEADERS:
        this.onHeaders(flags, id, payload)
        return
      case CONTINUATION:
        if (this.block?.id !== id) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a CONTINUATION without its HEADERS')
        this.addFragment(payload, flags)
        return
      case RST_STREAM:
        if (id === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'RST_STREAM on stream 0')
        this.close(this.streams.get(id))
        return
      case SETTINGS:
        this.onSettings(flags, id, payload)
        return
      case PING:
        if (id !== 0 || payload.length !== 8) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a malformed PING')
        if (flags & ACK) this.pingSent = false
        else this.frame(PING, ACK, 0, payload.slice())
        return
      case WINDOW_UPDATE:
        this.onWindowUpdate(id, payload)
        return
      case PUSH_PROMISE:
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a client may not push')
      case GOAWAY:
        this.goingAway = true // the client opens no more streams; the ones open are answered
        return
      default:
        return // PRIORITY is advice this server does not need; unknown types are ignored (RFC 9113, 5.5)
    }
  }

  private onData(flags: number, id: number, payload: Uint8Array): void {
    if (id === 0 || id > this.lastStreamId) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, `DATA on idle stream ${id}`)
    this.unacknowledged += payload.length
    if (this.unacknowledged >= RECEIVE_WINDOW / 2) {
      this.frame(WINDOW_UPDATE, 0, 0, u32(this.unacknowledged))
      this.unacknowledged = 0
    }
    const stream = this.streams.get(id)
    if (stream === undefined || stream.remoteEnded) return // closed or reset here: in flight, dropped
    stream.receive(this.unpad(flags, payload))
    if (flags & END_STREAM) {
      stream.remoteEnded = true
      this.dispatch(stream)
      return
    }
    stream.unacknowledged += payload.length
    if (stream.unacknowledged >= RECEIVE_WINDOW / 2) {
      this.frame(WINDOW_UPDATE, 0, id, u32(stream.unacknowledged))
      stream.unacknowledged = 0
    }
    if (stream.overflowed) this.dispatch(stream) // answered at once (the answer resets the rest)
  }

  private onHeaders(flags: number, id: number, payload: Uint8Array): void {
    if (id === 0 || id % 2 === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, `HEADERS on stream ${id}`)
    let fragment = this.unpad(flags, payload)
    if (flags & PRIORITY) {
      if (fragment.length < 5) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'a HEADERS frame too short for its priority')
      fragment = fragment.subarray(5)
    }
    this.block = { id, endStream: (flags & END_STREAM) !== 0, parts: [], length: 0 }
    this.addFragment(fragment, flags)
  }

  private addFragment(fragment: Uint8Array, flags: number): void {
    const block = this.block as NonNullable<typeof this.block>
    block.length += fragment.length
    if (block.length > MAX_HEADER_BLOCK)
      throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, `a header block over ${MAX_HEADER_BLOCK} octets`)
    const complete = (flags & END_HEADERS) !== 0
    // a fragment waiting for its CONTINUATION is copied: the socket's buffer is not kept
    block.parts.push(complete ? fragment : fragment.slice())
    if (!complete) return
    this.block = undefined
    // every block is decoded, even one whose stream is refused: it changes the decoder's table
    const headers = this.decoder.decode(block.parts.length === 1 ? (block.parts[0] as Uint8Array) : Buffer.concat(block.parts))
    const existing = this.streams.get(block.id)
    if (existing !== undefined) {
      // trailers of the request: they end it
      existing.remoteEnded = true
      this.dispatch(existing)
      return
    }
    if (block.id <= this.lastStreamId) return // a stream closed here, still sending: dropped
    this.lastStreamId = block.id
    if (this.goingAway || this.streams.size >= MAX_STREAMS) {
      this.frame(RST_STREAM, 0, block.id, u32(H2_ERROR.REFUSED_STREAM))
      return
    }
    const stream = new Http2Stream(block.id, this.peerWindow, this, this.maxBody)
    for (const [name, value] of headers) {
      const before = stream.headers.get(name)
      stream.headers.set(name, before === undefined ? value : `${before}, ${value}`)
    }
    this.streams.set(block.id, stream)
    if (block.endStream) {
      stream.remoteEnded = true
      this.dispatch(stream)
    }
  }

  private onSettings(flags: number, id: number, payload: Uint8Array): void {
    if (id !== 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'SETTINGS on a stream')
    if (flags & ACK) return
    if (payload.length % 6 !== 0) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'a SETTINGS frame of odd length')
    for (let at = 0; at < payload.length; at += 6) {
      const setting = ((payload[at] as number) << 8) | (payload[at + 1] as number)
      const value = readU32(payload, at + 2)
      if (setting === 0x4) {
        if (value > MAX_WINDOW) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'an initial window over 2^31-1')
        const delta = value - this.peerWindow
        this.peerWindow = value
        for (const stream of this.streams.values()) stream.sendWindow += delta
      } else if (setting === 0x5) {
        if (value < MAX_FRAME || value > 2 ** 24 - 1) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a bad frame size')
        this.peerMaxFrame = value
      }
    }
    this.frame(SETTINGS, ACK, 0, new Uint8Array(0))
    for (const stream of [...this.blocked]) this.pump(stream)
  }

  private onWindowUpdate(id: number, payload: Uint8Array): void {
    if (payload.length !== 4) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'a WINDOW_UPDATE of bad length')
    const increment = readU32(payload, 0) & 0x7fffffff
    if (id === 0) {
      if (increment === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a window update of 0')
      this.sendWindow += increment
      if (this.sendWindow > MAX_WINDOW) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'a window over 2^31-1')
      for (const stream of [...this.blocked]) this.pump(stream)
      return
    }
    const stream = this.streams.get(id)
    if (stream === undefined || increment === 0) return
    stream.sendWindow += increment
    this.pump(stream)
  }

  /** A frame's payload without its padding. */
  private unpad(flags: number, payload: Uint8Array): Uint8Array {
    if ((flags & PADDED) === 0) return payload
    const pad = payload[0] ?? 0
    if (payload.length < 1 + pad) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'padding longer than its frame')
    return payload.subarray(1, payload.length - pad)
  }

  private dispatch(stream: Http2Stream): void {
    if (stream.dispatched) return
    stream.dispatched = true
    try {
      this.onRequest(stream)
    } catch {
      this.reset(stream, H2_ERROR.INTERNAL_ERROR)
    }
  }

  sendHeaders(stream: Http2Stream, block: Uint8Array, endStream: boolean): void {
    const first = block.subarray(0, this.peerMaxFrame)
    const last = first.length === block.length
    this.frame(HEADERS, (endStream ? END_STREAM : 0) | (last ? END_HEADERS : 0), stream.id, first)
    for (let at = first.length; at < block.length; at += this.peerMaxFrame) {
      const part = block.subarray(at, at + this.peerMaxFrame)
      this.frame(CONTINUATION, at + part.length === block.length ? END_HEADERS : 0, stream.id, part)
    }
    if (endStream) this.finish(stream)
  }

  sendAnswer(stream: Http2Stream, headers: Uint8Array, data: Uint8Array, trailers: Uint8Array): void {
    const max = this.peerMaxFrame
    if (this.closed) return
    if (data.length > Math.min(this.sendWindow, stream.sendWindow, max) || headers.length > max || trailers.length > max) {
      // too large for one flight: the general path (windows, continuations)
      this.sendHeaders(stream, headers, false)
      stream.queue.push(data)
      stream.trailers = trailers
      this.pump(stream)
      return
    }
    // the usual unary answer: HEADERS, DATA and trailing HEADERS in one buffer
    const out = new Uint8Array(27 + headers.length + data.length + trailers.length)
    let at = 0
    frameHeader(out, at, headers.length, HEADERS, END_HEADERS, stream.id)
    out.set(headers, at + 9)
    at += 9 + headers.length
    frameHeader(out, at, data.length, DATA, 0, stream.id)
    out.set(data, at + 9)
    at += 9 + data.length
    frameHeader(out, at, trailers.length, HEADERS, END_HEADERS | END_STREAM, stream.id)
    out.set(trailers, at + 9)
    this.sendWindow -= data.length
    stream.sendWindow -= data.length
    this.push(out)
    this.finish(stream)
  }

  pump(stream: Http2Stream): void {
    while (stream.queue.length > 0) {
      const chunk = stream.queue[0] as Uint8Array
      const room = Math.min(this.sendWindow, stream.sendWindow, this.peerMaxFrame)
      if (room <= 0 && chunk.length > 0) {
        this.blocked.add(stream)
        return
      }
      const n = Math.min(room, chunk.length)
      this.frame(DATA, 0, stream.id, chunk.subarray(0, n))
      this.sendWindow -= n
      stream.sendWindow -= n
      if (n === chunk.length) stream.queue.shift()
      else stream.queue[0] = chunk.subarray(n)
    }
    this.blocked.delete(stream)
    if (stream.trailers !== undefined && !stream.closed) this.sendHeaders(stream, stream.trailers, true)
  }

  reset(stream: Http2Stream, code: number): void {
    this.frame(RST_STREAM, 0, stream.id, u32(code))
    this.close(stream)
  }

  /** This side ended `stream`; a client still sending is told to stop (RFC 9113, 8.1). */
  private finish(stream: Http2Stream): void {
    if (!stream.remoteEnded) this.frame(RST_STREAM, 0, stream.id, u32(H2_ERROR.NO_ERROR))
    this.close(stream)
  }

  private close(stream: Http2Stream | undefined): void {
    if (stream === undefined) return
    this.streams.delete(stream.id)
    this.blocked.delete(stream)
    stream.markClosed()
  }

  /** Sends a PING; `false` when the last one was never answered (the peer is gone). */
  ping(): boolean {
    if (this.pingSent) return false
    this.pingSent = true
    this.frame(PING, 0, 0, new Uint8Array(8))
    return true
  }

  /** Tells the client no new streams will be taken (GOAWAY, NO_ERROR); open ones go on. */
  goAway(): void {
    if (this.goingAway || this.closed) return
    this.goingAway = true
    this.frame(GOAWAY, 0, 0, Uint8Array.from([...u32(this.lastStreamId), ...u32(H2_ERROR.NO_ERROR)]))
  }

  /** The socket closed: every stream with it. */
  socketClosed(): void {
    this.closed = true
    this.out = []
    for (const stream of [...this.streams.values()]) this.close(stream)
  }

  private fail(code: number, message: string): void {
    const debug = Buffer.from(message, 'utf8')
    this.frame(GOAWAY, 0, 0, Buffer.concat([u32(this.lastStreamId), u32(code), debug]))
    this.flush()
    this.socketClosed()
    this.sink.end()
  }

  /** An HTTP/1 client on a gRPC port: one plain answer that says what the port is. */
  private notHttp2(): void {
    this.out = []
    const text = 'this port serves gRPC (HTTP/2 with prior knowledge): flagd evaluation service\n'
    this.sink.write(
      Buffer.from(
        `HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\ncontent-length: ${text.length}\r\nconnection: close\r\n\r\n${text}`,
      ),
    )
    this.socketClosed()
    this.sink.end()
  }

  private frame(type: number, flags: number, id: number, payload: Uint8Array): void {
    if (this.closed) return
    const frame = new Uint8Array(9 + payload.length)
    frameHeader(frame, 0, payload.length, type, flags, id)
    frame.set(payload, 9)
    this.push(frame)
  }

  private push(bytes: Uint8Array): void {
    this.out.push(bytes)
    if (!this.reading && !this.flushQueued) {
      this.flushQueued = true
      queueMicrotask(() => this.flush())
    }
  }

  private flush(): void {
    this.flushQueued = false
    if (this.out.length === 0) return
    const bytes = this.out.length === 1 ? (this.out[0] as Uint8Array) : Buffer.concat(this.out)
    this.out = []
    this.sink.write(bytes)
  }
}
