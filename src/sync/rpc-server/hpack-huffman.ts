/**
 * HPACK's Huffman code (RFC 7541, appendix B), for the header strings clients send compressed. The
 * code is canonical, so the table is its 257 code lengths (symbols 0–255 and end-of-string, 256);
 * the codes follow from them, and decoding walks the code one length at a time.
 */

// code length of each symbol, in symbol order (RFC 7541, appendix B)
const LENGTHS = [
  13, 23, 28, 28, 28, 28, 28, 28, 28, 24, 30, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 30, 28, 28, 28, 28, 28, 28, 28, 28, 28, 6, 10, 10,
  12, 13, 6, 8, 11, 10, 10, 8, 11, 8, 6, 6, 6, 5, 5, 5, 6, 6, 6, 6, 6, 6, 6, 7, 8, 15, 6, 12, 10, 13, 6, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7,
  7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 8, 7, 8, 13, 19, 13, 14, 6, 15, 5, 6, 5, 6, 5, 6, 6, 6, 5, 7, 7, 6, 6, 6, 5, 6, 7, 6, 5, 5, 6, 7, 7, 7, 7,
  7, 15, 11, 14, 13, 28, 20, 22, 20, 20, 22, 22, 22, 23, 22, 23, 23, 23, 23, 23, 24, 23, 24, 24, 22, 23, 24, 23, 23, 23, 23, 21, 22, 23, 22,
  23, 23, 24, 22, 21, 20, 22, 22, 23, 23, 21, 23, 22, 22, 24, 21, 22, 23, 23, 21, 21, 22, 21, 23, 22, 23, 23, 20, 22, 22, 22, 23, 22, 22,
  23, 26, 26, 20, 19, 22, 23, 22, 25, 26, 26, 26, 27, 27, 26, 24, 25, 19, 21, 26, 27, 27, 26, 27, 24, 21, 21, 26, 26, 28, 27, 27, 27, 20,
  24, 20, 21, 22, 21, 21, 23, 22, 22, 25, 25, 24, 24, 26, 23, 26, 27, 26, 26, 27, 27, 27, 27, 27, 28, 27, 27, 27, 27, 27, 26, 30,
]
const EOS = 256
const MAX_LENGTH = 30

// symbols in code order, and per length: the first code of that length and where its symbols start
const SYMBOLS = LENGTHS.map((length, symbol) => ({ length, symbol }))
  .sort((a, b) => a.length - b.length || a.symbol - b.symbol)
  .map((s) => s.symbol)
const FIRST_CODE = new Array<number>(MAX_LENGTH + 2).fill(0)
const FIRST_INDEX = new Array<number>(MAX_LENGTH + 2).fill(0)
const COUNT = new Array<number>(MAX_LENGTH + 2).fill(0)
for (const length of LENGTHS) COUNT[length] = (COUNT[length] as number) + 1
{
  let code = 0
  let index = 0
  for (let length = 1; length <= MAX_LENGTH; length++) {
    FIRST_CODE[length] = code
    FIRST_INDEX[length] = index
    code = (code + (COUNT[length] as number)) * 2
    index += COUNT[length] as number
  }
}

/** A string the Huffman code cannot have produced. */
export class HuffmanError extends Error {}

/** Decodes `bytes` (a Huffman-coded header string) as latin-1 text, as HTTP/2 header octets are. */
export function huffmanDecode(bytes: Uint8Array): string {
  let out = ''
  let code = 0
  let length = 0
  for (const byte of bytes) {
    for (let bit = 7; bit >= 0; bit--) {
      code = code * 2 + ((byte >> bit) & 1)
      length++
      const offset = code - (FIRST_CODE[length] as number)
      if (offset >= 0 && offset < (COUNT[length] as number)) {
        const symbol = SYMBOLS[(FIRST_INDEX[length] as number) + offset] as number
        if (symbol === EOS) throw new HuffmanError('a Huffman string holds the end-of-string code')
        out += String.fromCharCode(symbol)
        code = 0
        length = 0
      } else if (length >= MAX_LENGTH) throw new HuffmanError('a Huffman string holds no valid code')
    }
  }
  // what is left is padding: at most seven bits, all ones (the start of end-of-string)
  if (length > 7 || code !== 2 ** length - 1) throw new HuffmanError('a Huffman string ends with bad padding')
  return out
}

/** The code of `symbol`, for tests: `[code, length]`. */
export function huffmanCodeOf(symbol: number): [number, number] {
  const length = LENGTHS[symbol] as number
  const index = SYMBOLS.indexOf(symbol)
  return [(FIRST_CODE[length] as number) + index - (FIRST_INDEX[length] as number), length]
}
