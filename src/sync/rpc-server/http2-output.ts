/**
 * The sending half of a server-side HTTP/2 connection: frames gathered and written in one `write`
 * per read (or per task, for answers made later), DATA sent within the peer's flow-control windows
 * (the connection's and each stream's) and the rest queued until a WINDOW_UPDATE makes room.
 */

import { ConnectionError, DEFAULT_WINDOW, FLAG, FRAME, frameHeader, H2_ERROR, MAX_FRAME, MAX_WINDOW, u32 } from './http2-frames.ts'
import type { Http2Stream } from './http2-stream.ts'

/** Where a connection's octets go (the socket, with its own backpressure). */
export interface Http2Sink {
  write(bytes: Uint8Array): void
  end(): void
}

/** One connection's output. */
export class Http2Output {
  /** Octets the peer lets the whole connection send now, and its largest frame. */
  private window = DEFAULT_WINDOW
  maxFrame = MAX_FRAME
  /** Set while a read is processed: frames wait for its end instead of a task of their own. */
  reading = false
  closed = false
  private readonly blocked = new Set<Http2Stream>()
  private out: Uint8Array[] = []
  private flushQueued = false

  constructor(
    private readonly sink: Http2Sink,
    /** A stream this side has ended (its last frame is queued). */
    private readonly ended: (stream: Http2Stream) => void,
  ) {}

  /** Queues one frame. */
  frame(type: number, flags: number, id: number, payload: Uint8Array): void {
    if (this.closed) return
    const frame = new Uint8Array(9 + payload.length)
    frameHeader(frame, 0, payload.length, type, flags, id)
    frame.set(payload, 9)
    this.push(frame)
  }

  /** HEADERS (and CONTINUATIONs, past the peer's frame size); `endStream` ends the stream with them. */
  headers(stream: Http2Stream, block: Uint8Array, endStream: boolean): void {
    const first = block.subarray(0, this.maxFrame)
    const last = first.length === block.length
    this.frame(FRAME.HEADERS, (endStream ? FLAG.END_STREAM : 0) | (last ? FLAG.END_HEADERS : 0), stream.id, first)
    for (let at = first.length; at < block.length; at += this.maxFrame) {
      const part = block.subarray(at, at + this.maxFrame)
      this.frame(FRAME.CONTINUATION, at + part.length === block.length ? FLAG.END_HEADERS : 0, stream.id, part)
    }
    if (endStream) this.finish(stream)
  }

  /** A whole answer: HEADERS, DATA and trailers in one buffer when the windows allow, else queued. */
  answer(stream: Http2Stream, headers: Uint8Array, data: Uint8Array, trailers: Uint8Array): void {
    if (this.closed) return
    const max = this.maxFrame
    if (data.length > Math.min(this.window, stream.sendWindow, max) || headers.length > max || trailers.length > max) {
      this.headers(stream, headers, false)
      stream.queue.push(data)
      stream.trailers = trailers
      this.pump(stream)
      return
    }
    const out = new Uint8Array(27 + headers.length + data.length + trailers.length)
    let at = 0
    frameHeader(out, at, headers.length, FRAME.HEADERS, FLAG.END_HEADERS, stream.id)
    out.set(headers, at + 9)
    at += 9 + headers.length
    frameHeader(out, at, data.length, FRAME.DATA, 0, stream.id)
    out.set(data, at + 9)
    at += 9 + data.length
    frameHeader(out, at, trailers.length, FRAME.HEADERS, FLAG.END_HEADERS | FLAG.END_STREAM, stream.id)
    out.set(trailers, at + 9)
    this.window -= data.length
    stream.sendWindow -= data.length
    this.push(out)
    this.finish(stream)
  }

  /** Sends what `stream` has queued, as far as the windows allow; then its trailers. */
  pump(stream: Http2Stream): void {
    while (stream.queue.length > 0) {
      const chunk = stream.queue[0] as Uint8Array
      const room = Math.min(this.window, stream.sendWindow, this.maxFrame)
      if (room <= 0 && chunk.length > 0) {
        this.blocked.add(stream)
        return
      }
      const n = Math.min(room, chunk.length)
      this.frame(FRAME.DATA, 0, stream.id, chunk.subarray(0, n))
      this.window -= n
      stream.sendWindow -= n
      if (n === chunk.length) stream.queue.shift()
      else stream.queue[0] = chunk.subarray(n)
    }
    this.blocked.delete(stream)
    if (stream.trailers !== undefined && !stream.closed) this.headers(stream, stream.trailers, true)
  }

  /** The connection's window grew (WINDOW_UPDATE on stream 0). */
  grow(increment: number): void {
    this.window += increment
    if (this.window > MAX_WINDOW) throw new ConnectionError(H2_ERROR.FLOW_CONTROL_ERROR, 'a window over 2^31-1')
    this.pumpBlocked()
  }

  /** Sends what waited for window, after any window grew. */
  pumpBlocked(): void {
    for (const stream of [...this.blocked]) this.pump(stream)
  }

  /** `stream` is gone: nothing of it waits any more. */
  forget(stream: Http2Stream): void {
    this.blocked.delete(stream)
  }

  /** This side ended `stream`; a client still sending is told to stop (RFC 9113, 8.1). */
  private finish(stream: Http2Stream): void {
    if (!stream.remoteEnded) this.frame(FRAME.RST_STREAM, 0, stream.id, u32(H2_ERROR.NO_ERROR))
    this.ended(stream)
  }

  private push(bytes: Uint8Array): void {
    this.out.push(bytes)
    if (!this.reading && !this.flushQueued) {
      this.flushQueued = true
      queueMicrotask(() => this.flush())
    }
  }

  /** Writes what is gathered. */
  flush(): void {
    this.flushQueued = false
    if (this.out.length === 0) return
    const bytes = this.out.length === 1 ? (this.out[0] as Uint8Array) : Buffer.concat(this.out)
    this.out = []
    this.sink.write(bytes)
  }

  /** Drops what is gathered and sends nothing more (the socket is gone, or is being answered otherwise). */
  close(): void {
    this.closed = true
    this.out = []
  }
}
