/**
 * A connection's octets to a Bun socket. Bun writes what the kernel takes and says how much; the
 * rest is kept here and written on `drain`, in order, so an answer is never cut. The peer's
 * flow-control windows bound how much can wait.
 */

import type { Socket } from 'bun'
import type { Http2Sink } from './http2-output.ts'

/** Octets to a Bun socket, kept while the kernel's buffer is full (written again on `drain`). */
export class SocketSink implements Http2Sink {
  private backlog: Uint8Array[] = []
  private ending = false

  constructor(private readonly socket: Socket<unknown>) {}

  write(bytes: Uint8Array): void {
    if (this.backlog.length === 0) {
      const written = this.socket.write(bytes)
      if (written >= bytes.length || written < 0) return
      bytes = bytes.subarray(written)
    }
    this.backlog.push(bytes.slice()) // kept past this call: a copy, whoever owns the buffer
  }

  drain(): void {
    while (this.backlog.length > 0) {
      const next = this.backlog[0] as Uint8Array
      const written = this.socket.write(next)
      if (written < next.length) {
        if (written > 0) this.backlog[0] = next.subarray(written)
        return
      }
      this.backlog.shift()
    }
    if (this.ending) this.socket.end()
  }

  end(): void {
    this.ending = true
    if (this.backlog.length === 0) this.socket.end()
  }
}
