/**
 * The header blocks this server sends (responses and trailers), HPACK-encoded without touching the
 * peer's dynamic table: `:status: 200` by its static index, everything else as literals that are
 * not indexed and not Huffman-coded. The blocks are small and mostly built once, so plain is enough.
 */

/** An HPACK integer with an N-bit prefix, the prefix's other bits being `flags`. */
function integer(out: number[], value: number, prefix: number, flags: number): void {
  const max = (1 << prefix) - 1
  if (value < max) {
    out.push(flags | value)
    return
  }
  out.push(flags | max)
  let rest = value - max
  while (rest >= 0x80) {
    out.push((rest % 0x80) | 0x80)
    rest = Math.floor(rest / 0x80)
  }
  out.push(rest)
}

/** A plain string literal (latin-1 octets). */
function string(out: number[], text: string): void {
  integer(out, text.length, 7, 0)
  for (let i = 0; i < text.length; i++) out.push(text.charCodeAt(i) & 0xff)
}

/** The HPACK block of `headers`, in order. */
export function headerBlock(headers: readonly (readonly [string, string])[]): Uint8Array {
  const out: number[] = []
  for (const [name, value] of headers) {
    if (name === ':status' && value === '200') {
      out.push(0x88) // static table entry 8
      continue
    }
    out.push(0x00) // literal without indexing, new name
    string(out, name)
    string(out, value)
  }
  return Uint8Array.from(out)
}
