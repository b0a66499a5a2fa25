/**
 * HTTP/2's wire vocabulary (RFC 9113, sections 4–7) as this server uses it: frame types and flags,
 * error codes, the limits this side announces, and the nine-octet frame header.
 */

/** Frame types. */
export const FRAME = {
  DATA: 0x0,
  HEADERS: 0x1,
  PRIORITY: 0x2,
  RST_STREAM: 0x3,
  SETTINGS: 0x4,
  PUSH_PROMISE: 0x5,
  PING: 0x6,
  GOAWAY: 0x7,
  WINDOW_UPDATE: 0x8,
  CONTINUATION: 0x9,
} as const

/** Frame flags (ACK shares END_STREAM's bit, on the frames that have it). */
export const FLAG = { END_STREAM: 0x1, ACK: 0x1, END_HEADERS: 0x4, PADDED: 0x8, PRIORITY: 0x20 } as const

/** Error codes. */
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

/** What a client sends first. */
export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1')
/** The protocol's initial window, and the largest any window may grow to. */
export const DEFAULT_WINDOW = 65_535
export const MAX_WINDOW = 2 ** 31 - 1
/** The protocol's default frame size, which this side keeps for what it receives. */
export const MAX_FRAME = 16_384

/** A mistake that ends the connection (GOAWAY with `code`). */
export class ConnectionError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message)
  }
}

/** Writes a frame's nine-octet header into `to` at `at`. */
export function frameHeader(to: Uint8Array, at: number, length: number, type: number, flags: number, id: number): void {
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

/** A 32-bit big-endian number, and one read back. */
export const u32 = (n: number) => Uint8Array.of(n >>> 24, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff)
export const readU32 = (b: Uint8Array, at: number) =>
  (((b[at] as number) << 24) | ((b[at + 1] as number) << 16) | ((b[at + 2] as number) << 8) | (b[at + 3] as number)) >>> 0
