/**
 * One request stream of a server-side HTTP/2 connection (RFC 9113, section 5): the headers and
 * body the client sent, and the answer going back, whose DATA waits for the peer's flow-control
 * window. The connection does the framing; a stream only says what to send, in order.
 */

/** What a stream asks of its connection. */
export interface StreamOwner {
  sendHeaders(stream: Http2Stream, block: Uint8Array, endStream: boolean): void
  sendAnswer(stream: Http2Stream, headers: Uint8Array, data: Uint8Array, trailers: Uint8Array): void
  pump(stream: Http2Stream): void
  reset(stream: Http2Stream, code: number): void
}

/** A client's request and the server's answer to it. */
export class Http2Stream {
  /** The request's headers, pseudo-headers included; a repeated name's values joined with `, `. */
  readonly headers = new Map<string, string>()
  /** DATA octets since the last stream WINDOW_UPDATE this side sent. */
  unacknowledged = 0
  /** The client ended its side (END_STREAM). */
  remoteEnded = false
  /** Either side ended or reset the stream; nothing more is sent. */
  closed = false
  /** The answer's headers went out. */
  responded = false
  /** The request went to the handler (once, whatever else arrives). */
  dispatched = false
  /** The request's body went over the limit and was dropped. */
  overflowed = false
  /** DATA payloads that wait for window, and the trailers that follow them. */
  readonly queue: Uint8Array[] = []
  trailers: Uint8Array | undefined
  private readonly chunks: Uint8Array[] = []
  private length = 0
  private readonly closeListeners: (() => void)[] = []

  constructor(
    readonly id: number,
    /** Octets the peer lets this stream send now. */
    public sendWindow: number,
    private readonly owner: StreamOwner,
    private readonly maxBody: number,
  ) {}

  /** Keeps a DATA payload of the request (copied: the socket's buffer is reused). */
  receive(payload: Uint8Array): void {
    if (this.overflowed) return
    this.length += payload.length
    if (this.length > this.maxBody) {
      this.overflowed = true
      this.chunks.length = 0
      return
    }
    if (payload.length > 0) this.chunks.push(payload.slice())
  }

  /** The whole body the client sent. */
  body(): Uint8Array {
    if (this.chunks.length === 1) return this.chunks[0] as Uint8Array
    return Buffer.concat(this.chunks)
  }

  /** Sends the answer's headers; `endStream` makes them the whole answer. */
  respond(block: Uint8Array, endStream = false): void {
    if (this.closed || this.responded) return
    this.responded = true
    this.owner.sendHeaders(this, block, endStream)
  }

  /** Sends a whole answer: headers, body and trailers (one write when the windows allow). */
  answer(headers: Uint8Array, data: Uint8Array, trailers: Uint8Array): void {
    if (this.closed || this.responded) return
    this.responded = true
    this.trailers = trailers
    this.owner.sendAnswer(this, headers, data, trailers)
  }

  /** Sends body octets, as the flow-control window allows. */
  send(data: Uint8Array): void {
    if (this.closed || this.trailers !== undefined) return
    this.queue.push(data)
    this.owner.pump(this)
  }

  /** Ends the answer with trailers, after the body still queued. */
  end(block: Uint8Array): void {
    if (this.closed || this.trailers !== undefined) return
    this.trailers = block
    this.owner.pump(this)
  }

  /** Resets the stream (RST_STREAM with `code`). */
  reset(code: number): void {
    if (!this.closed) this.owner.reset(this, code)
  }

  /** Calls `listener` once when the stream closes, whichever side closes it. */
  onClose(listener: () => void): void {
    if (this.closed) listener()
    else this.closeListeners.push(listener)
  }

  /** Marks the stream closed and tells its listeners (for the connection). */
  markClosed(): void {
    if (this.closed) return
    this.closed = true
    this.queue.length = 0
    for (const listener of this.closeListeners.splice(0)) listener()
  }
}
