/**
 * HPACK's decoder (RFC 7541): the header blocks of one HTTP/2 connection, in order, into header
 * lists. It keeps the connection's dynamic table, which is why every block must pass through it,
 * even one whose request is refused. Header octets are read as latin-1, as HTTP/2 defines them.
 */

import { HuffmanError, huffmanDecode } from './hpack-huffman.ts'

/** A header block that cannot be decoded: a connection error (`COMPRESSION_ERROR`). */
export class CompressionError extends Error {}

/** The static table (RFC 7541, appendix A); index 1 is the first entry. */
const STATIC: readonly (readonly [string, string])[] = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ...[
    'accept-charset',
    'accept-encoding',
    'accept-language',
    'accept-ranges',
    'accept',
    'access-control-allow-origin',
    'age',
    'allow',
    'authorization',
    'cache-control',
    'content-disposition',
    'content-encoding',
    'content-language',
    'content-length',
    'content-location',
    'content-range',
    'content-type',
    'cookie',
    'date',
    'etag',
    'expect',
    'expires',
    'from',
    'host',
    'if-match',
    'if-modified-since',
    'if-none-match',
    'if-range',
    'if-unmodified-since',
    'last-modified',
    'link',
    'location',
    'max-forwards',
    'proxy-authenticate',
    'proxy-authorization',
    'range',
    'referer',
    'refresh',
    'retry-after',
    'server',
    'set-cookie',
    'strict-transport-security',
    'transfer-encoding',
    'user-agent',
    'vary',
    'via',
    'www-authenticate',
  ].map((name) => [name, name === 'accept-encoding' ? 'gzip, deflate' : ''] as const),
]

// an entry's size in the dynamic table: its octets and 32 (RFC 7541, section 4.1)
const sizeOf = (name: string, value: string) => name.length + value.length + 32

/** Octets as latin-1 text (without touching `.buffer`, which is costly on a small typed array). */
function latin1(bytes: Uint8Array): string {
  let text = ''
  for (let i = 0; i < bytes.length; i += 4096) text += String.fromCharCode.apply(null, bytes.subarray(i, i + 4096) as unknown as number[])
  return text
}

/** One connection's decoder. `limit` is the table size this side advertised (SETTINGS_HEADER_TABLE_SIZE). */
export class HpackDecoder {
  private readonly table: [string, string][] = [] // newest first
  private size = 0
  private max: number
  private block: Uint8Array = new Uint8Array(0)
  private at = 0

  constructor(private readonly limit = 4096) {
    this.max = limit
  }

  /** The header list of one complete block (HEADERS and its CONTINUATIONs). */
  decode(block: Uint8Array): [string, string][] {
    this.block = block
    this.at = 0
    const headers: [string, string][] = []
    while (this.at < block.length) {
      const first = block[this.at] as number
      if (first & 0x80) {
        headers.push(this.entry(this.integer(7)))
      } else if (first & 0x40) {
        const header = this.literal(6)
        this.insert(header)
        headers.push(header)
      } else if (first & 0x20) {
        const size = this.integer(5)
        if (size > this.limit) throw new CompressionError(`a table size of ${size} is over the ${this.limit} allowed`)
        this.max = size
        this.evict(0)
      } else {
        headers.push(this.literal(4)) // without indexing, or never indexed: both leave the table alone
      }
    }
    return headers
  }

  private entry(index: number): [string, string] {
    if (index === 0) throw new CompressionError('header index 0')
    const found = index <= STATIC.length ? STATIC[index - 1] : this.table[index - STATIC.length - 1]
    if (found === undefined) throw new CompressionError(`header index ${index} is not in the table`)
    return [found[0], found[1]]
  }

  private literal(prefix: number): [string, string] {
    const index = this.integer(prefix)
    const name = index === 0 ? this.string() : this.entry(index)[0]
    return [name, this.string()]
  }

  private insert([name, value]: [string, string]): void {
    const size = sizeOf(name, value)
    this.evict(size)
    if (size > this.max) return // an entry larger than the table empties it and is not kept
    this.table.unshift([name, value])
    this.size += size
  }

  /** Drops the oldest entries until `room` more octets fit. */
  private evict(room: number): void {
    while (this.size + room > this.max && this.table.length > 0) {
      const [name, value] = this.table.pop() as [string, string]
      this.size -= sizeOf(name, value)
    }
  }

  /** An integer with an N-bit prefix (RFC 7541, section 5.1). */
  private integer(prefix: number): number {
    const mask = (1 << prefix) - 1
    let value = (this.block[this.at++] as number) & mask
    if (value < mask) return value
    for (let shift = 0; shift <= 28; shift += 7) {
      if (this.at >= this.block.length) throw new CompressionError('a header block ends inside an integer')
      const byte = this.block[this.at++] as number
      value += (byte & 0x7f) * 2 ** shift
      if ((byte & 0x80) === 0) return value
    }
    throw new CompressionError('an integer in a header block is too large')
  }

  /** A string literal, plain or Huffman-coded (RFC 7541, section 5.2). */
  private string(): string {
    if (this.at >= this.block.length) throw new CompressionError('a header block ends before a string')
    const huffman = ((this.block[this.at] as number) & 0x80) !== 0
    const length = this.integer(7)
    const end = this.at + length
    if (end > this.block.length) throw new CompressionError('a header string runs past its block')
    const bytes = this.block.subarray(this.at, end)
    this.at = end
    if (!huffman) return latin1(bytes)
    try {
      return huffmanDecode(bytes)
    } catch (err) {
      if (err instanceof HuffmanError) throw new CompressionError(err.message)
      throw err
    }
  }
}
