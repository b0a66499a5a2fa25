/**
 * The state file's bytes, encoded from its pieces (`StateText.pieces`) into one buffer that is kept
 * and reused from write to write. The store writes a whole file per group commit; building it as a
 * string first made two file-sized strings per write, which the collector let pile up under
 * sustained writes (see state-text-builder.ts). Here a write allocates nothing file-sized once the buffer
 * has grown to the file's size.
 */

import type { StatePieces } from './state-text-builder.ts'

const encoder = new TextEncoder()
const COMMA = 0x2c

/** An encoder with its own buffer (see module comment); one per store, used by one write at a time. */
export class StateBytes {
  private buffer = new Uint8Array(64 * 1024)

  /**
   * The UTF-8 bytes of the pieces joined. The answer is a view of the kept buffer: it is valid until
   * the next call, so the caller must be done with it (written to disk) before encoding again.
   */
  encode(pieces: StatePieces): Uint8Array {
    let length = 0
    for (const piece of pieces) {
      if (typeof piece === 'string') length = this.put(piece, length)
      else {
        for (let i = 0; i < piece.length; i++) {
          if (i > 0) length = this.putByte(COMMA, length)
          length = this.put(piece[i] as string, length)
        }
      }
    }
    return this.buffer.subarray(0, length)
  }

  /** Writes `text` at `at`, growing the buffer when it may not fit; answers the end. */
  private put(text: string, at: number): number {
    // a UTF-16 code unit never takes more than 3 bytes in UTF-8
    this.reserve(at + text.length * 3)
    return at + (encoder.encodeInto(text, this.buffer.subarray(at)).written as number)
  }

  private putByte(byte: number, at: number): number {
    this.reserve(at + 1)
    this.buffer[at] = byte
    return at + 1
  }

  private reserve(size: number): void {
    if (size <= this.buffer.length) return
    const grown = new Uint8Array(Math.max(size, this.buffer.length * 2))
    grown.set(this.buffer)
    this.buffer = grown
  }
}
