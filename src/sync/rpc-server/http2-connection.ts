/**
 * The server side of one HTTP/2 connection over cleartext with prior knowledge (RFC 9113), which is
 * what gRPC clients speak: frames in, requests out to `onRequest` once the client has ended them,
 * answers framed back within the peer's flow-control windows. Everything a compliant client may
 * send is handled (settings, pings, window updates, resets, padding, priorities, continuations);
 * a protocol mistake ends the connection with GOAWAY naming it. Output is gathered and written once
 * per read, or once per task for answers made later.
 */

import { CompressionError, HpackDecoder } from './hpack-decoder.ts'
import { ConnectionError, DEFAULT_WINDOW, FLAG, FRAME, H2_ERROR, MAX_FRAME, MAX_WINDOW, PREFACE, readU32, u32 } from './http2-frames.ts'
import { Http2Output, type Http2Sink } from './http2-output.ts'
import { Http2Stream, type StreamOwner } from './http2-stream.ts'

/** What this side accepts beyond the protocol's defaults: windows, streams at once, a header list. */
const RECEIVE_WINDOW = 1 << 20
const MAX_STREAMS = 1000
const MAX_HEADER_BLOCK = 64 * 1024

/** One connection. */
export class Http2Connection implements StreamOwner {
  private readonly decoder = new HpackDecoder()
  private readonly streams = new Map<number, Http2Stream>()
  private readonly output: Http2Output
  private pending: Uint8Array | undefined
  private prefaceSeen = false
  private lastStreamId = 0
  private block: { id: number; endStream: boolean; parts: Uint8Array[]; length: number } | undefined
  private peerWindow = DEFAULT_WINDOW
  private unacknowledged = 0
  private pingSent = false
  private goingAway = false
  private closed = false

  constructor(
    private readonly sink: Http2Sink,
    private readonly onRequest: (stream: Http2Stream) => void,
    private readonly maxBody: number,
    /** Where a connection that does not open with HTTP/2's preface goes (HTTP/1.1), with what it sent. */
    private readonly onOtherProtocol?: (first: Uint8Array) => void,
  ) {
    this.output = new Http2Output(sink, (stream) => this.close(stream))
  }

  /** This side's preface, once the client's is read (so an HTTP/1 client is answered in HTTP/1). */
  private sendPreface(): void {
    const settings = [
      [0x3, MAX_STREAMS],
      [0x4, RECEIVE_WINDOW],
      [0x6, MAX_HEADER_BLOCK],
    ].flatMap(([id, value]) => [0, id as number, ...u32(value as number)])
    this.frame(FRAME.SETTINGS, 0, 0, Uint8Array.from(settings))
    this.frame(FRAME.WINDOW_UPDATE, 0, 0, u32(RECEIVE_WINDOW - DEFAULT_WINDOW))
  }

  /** The client's preface has been read: this is HTTP/2. */
  get speaksHttp2(): boolean {
    return this.prefaceSeen
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
    this.output.reading = true
    try {
      let at = 0
      if (!this.prefaceSeen) {
        const seen = Math.min(data.length, PREFACE.length)
        if (!PREFACE.subarray(0, seen).equals(data.subarray(0, seen))) {
          if (this.onOtherProtocol === undefined) this.notHttp2()
          else {
            this.closed = true
            this.output.close()
            this.onOtherProtocol(data)
          }
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
      this.output.reading = false
      this.output.flush()
    }
  }

  private onFrame(type: number, flags: number, id: number, payload: Uint8Array): void {
    if (this.block !== undefined && type !== FRAME.CONTINUATION)
      throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a header block was interrupted by another frame')
    switch (type) {
      case FRAME.DATA:
        this.onData(flags, id, payload)
        return
      case FRAME.HEADERS:
        this.onHeaders(flags, id, payload)
        return
      case FRAME.CONTINUATION:
        if (this.block?.id !== id) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a CONTINUATION without its HEADERS')
        this.addFragment(payload, flags)
        return
      case FRAME.RST_STREAM:
        if (id === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'RST_STREAM on stream 0')
        this.close(this.streams.get(id))
        return
      case FRAME.SETTINGS:
        this.onSettings(flags, id, payload)
        return
      case FRAME.PING:
        if (id !== 0 || payload.length !== 8) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a malformed PING')
        if (flags & FLAG.ACK) this.pingSent = false
        else this.frame(FRAME.PING, FLAG.ACK, 0, payload.slice())
        return
      case FRAME.WINDOW_UPDATE:
        this.onWindowUpdate(id, payload)
        return
      case FRAME.PUSH_PROMISE:
        throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a client may not push')
      case FRAME.GOAWAY:
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
      this.frame(FRAME.WINDOW_UPDATE, 0, 0, u32(this.unacknowledged))
      this.unacknowledged = 0
    }
    const stream = this.streams.get(id)
    if (stream === undefined || stream.remoteEnded) return // closed or reset here: in flight, dropped
    stream.receive(this.unpad(flags, payload))
    if (flags & FLAG.END_STREAM) {
      stream.remoteEnded = true
      this.dispatch(stream)
      return
    }
    stream.unacknowledged += payload.length
    if (stream.unacknowledged >= RECEIVE_WINDOW / 2) {
      this.frame(FRAME.WINDOW_UPDATE, 0, id, u32(stream.unacknowledged))
      stream.unacknowledged = 0
    }
    if (stream.overflowed) this.dispatch(stream) // answered at once (the answer resets the rest)
  }

  private onHeaders(flags: number, id: number, payload: Uint8Array): void {
    if (id === 0 || id % 2 === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, `HEADERS on stream ${id}`)
    let fragment = this.unpad(flags, payload)
    if (flags & FLAG.PRIORITY) {
      if (fragment.length < 5) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'a HEADERS frame too short for its priority')
      fragment = fragment.subarray(5)
    }
    this.block = { id, endStream: (flags & FLAG.END_STREAM) !== 0, parts: [], length: 0 }
    this.addFragment(fragment, flags)
  }

  private addFragment(fragment: Uint8Array, flags: number): void {
    const block = this.block as NonNullable<typeof this.block>
    block.length += fragment.length
    if (block.length > MAX_HEADER_BLOCK)
      throw new ConnectionError(H2_ERROR.ENHANCE_YOUR_CALM, `a header block over ${MAX_HEADER_BLOCK} octets`)
    const complete = (flags & FLAG.END_HEADERS) !== 0
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
      this.frame(FRAME.RST_STREAM, 0, block.id, u32(H2_ERROR.REFUSED_STREAM))
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
    if (flags & FLAG.ACK) return
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
        this.output.maxFrame = value
      }
    }
    this.frame(FRAME.SETTINGS, FLAG.ACK, 0, new Uint8Array(0))
    this.output.pumpBlocked()
  }

  private onWindowUpdate(id: number, payload: Uint8Array): void {
    if (payload.length !== 4) throw new ConnectionError(H2_ERROR.FRAME_SIZE_ERROR, 'a WINDOW_UPDATE of bad length')
    const increment = readU32(payload, 0) & 0x7fffffff
    if (id === 0) {
      if (increment === 0) throw new ConnectionError(H2_ERROR.PROTOCOL_ERROR, 'a window update of 0')
      this.output.grow(increment)
      return
    }
    const stream = this.streams.get(id)
    if (stream === undefined || increment === 0) return
    stream.sendWindow += increment
    this.pump(stream)
  }

  /** A frame's payload without its padding. */
  private unpad(flags: number, payload: Uint8Array): Uint8Array {
    if ((flags & FLAG.PADDED) === 0) return payload
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
    this.output.headers(stream, block, endStream)
  }

  sendAnswer(stream: Http2Stream, headers: Uint8Array, data: Uint8Array, trailers: Uint8Array): void {
    this.output.answer(stream, headers, data, trailers)
  }

  pump(stream: Http2Stream): void {
    this.output.pump(stream)
  }

  reset(stream: Http2Stream, code: number): void {
    this.frame(FRAME.RST_STREAM, 0, stream.id, u32(code))
    this.close(stream)
  }

  private close(stream: Http2Stream | undefined): void {
    if (stream === undefined) return
    this.streams.delete(stream.id)
    this.output.forget(stream)
    stream.markClosed()
  }

  /**
   * Sends a PING; `false` when the last one was never answered (the peer is gone). A connection
   * not yet HTTP/2, or handed on as HTTP/1.1 (closed here), has nothing to answer it: `true`.
   */
  ping(): boolean {
    if (!this.prefaceSeen || this.closed) return true
    if (this.pingSent) return false
    this.pingSent = true
    this.frame(FRAME.PING, 0, 0, new Uint8Array(8))
    return true
  }

  /** Tells the client no new streams will be taken (GOAWAY, NO_ERROR); open ones go on. */
  goAway(): void {
    if (this.goingAway || this.closed) return
    this.goingAway = true
    this.frame(FRAME.GOAWAY, 0, 0, Uint8Array.from([...u32(this.lastStreamId), ...u32(H2_ERROR.NO_ERROR)]))
  }

  /** The socket closed: every stream with it. */
  socketClosed(): void {
    this.closed = true
    this.output.close()
    for (const stream of [...this.streams.values()]) this.close(stream)
  }

  private fail(code: number, message: string): void {
    const debug = Buffer.from(message, 'utf8')
    this.frame(FRAME.GOAWAY, 0, 0, Buffer.concat([u32(this.lastStreamId), u32(code), debug]))
    this.output.flush()
    this.socketClosed()
    this.sink.end()
  }

  /** An HTTP/1 client on a gRPC port: one plain answer that says what the port is. */
  private notHttp2(): void {
    this.output.close()
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
    this.output.frame(type, flags, id, payload)
  }
}
