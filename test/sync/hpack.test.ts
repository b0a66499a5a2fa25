/**
 * HPACK as this server reads it: the Huffman code and the decoder against RFC 7541's own examples
 * (appendix C), the dynamic table's eviction, the blocks this server writes read back, and every
 * malformed block refused as a CompressionError rather than a wrong header list.
 */

import { expect, test } from 'bun:test'
import { headerBlock } from '../../src/sync/rpc-server/header-block.ts'
import { CompressionError, HpackDecoder } from '../../src/sync/rpc-server/hpack-decoder.ts'
import { HuffmanError, huffmanDecode } from '../../src/sync/rpc-server/hpack-huffman.ts'

const hex = (h: string) => Uint8Array.from((h.replace(/\s/g, '').match(/../g) ?? []).map((b) => Number.parseInt(b, 16)))

test('the Huffman code decodes RFC 7541 C.4 and C.6 strings', () => {
  expect(huffmanDecode(hex('f1e3 c2e5 f23a 6ba0 ab90 f4ff'))).toBe('www.example.com')
  expect(huffmanDecode(hex('a8eb 1064 9cbf'))).toBe('no-cache')
  expect(huffmanDecode(hex('25a8 49e9 5ba9 7d7f'))).toBe('custom-key')
  expect(huffmanDecode(hex('25a8 49e9 5bb8 e8b4 bf'))).toBe('custom-value')
  expect(huffmanDecode(hex('6402'))).toBe('302')
  expect(huffmanDecode(hex('aec3 771a 4b'))).toBe('private')
  expect(huffmanDecode(hex('d07a be94 1054 d444 a820 0595 040b 8166 e082 a62d 1bff'))).toBe('Mon, 21 Oct 2013 20:13:21 GMT')
  expect(huffmanDecode(new Uint8Array(0))).toBe('')
})

test('a Huffman string with bad padding, or the end-of-string code, is refused', () => {
  expect(() => huffmanDecode(hex('f1e3 c2e5 f23a 6ba0 ab90 f4fe'))).toThrow(HuffmanError) // padding with a zero bit
  expect(() => huffmanDecode(hex('ffff ffff'))).toThrow(HuffmanError) // EOS (30 ones)
  expect(() => huffmanDecode(hex('1f ff'))).toThrow(HuffmanError) // '0' then more than seven bits of padding
})

test('RFC 7541 C.3: three requests without Huffman, through one table', () => {
  const d = new HpackDecoder()
  expect(d.decode(hex('8286 8441 0f77 7777 2e65 7861 6d70 6c65 2e63 6f6d'))).toEqual([
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/'],
    [':authority', 'www.example.com'],
  ])
  expect(d.decode(hex('8286 84be 5808 6e6f 2d63 6163 6865'))).toEqual([
    [':method', 'GET'],
    [':scheme', 'http'],
    [':path', '/'],
    [':authority', 'www.example.com'],
    ['cache-control', 'no-cache'],
  ])
  expect(d.decode(hex('8287 85bf 400a 6375 7374 6f6d 2d6b 6579 0c63 7573 746f 6d2d 7661 6c75 65'))).toEqual([
    [':method', 'GET'],
    [':scheme', 'https'],
    [':path', '/index.html'],
    [':authority', 'www.example.com'],
    ['custom-key', 'custom-value'],
  ])
  // the table now holds, newest first: custom-key, cache-control, :authority (indexes 62, 63, 64)
  expect(d.decode(hex('be bf c0'))).toEqual([
    ['custom-key', 'custom-value'],
    ['cache-control', 'no-cache'],
    [':authority', 'www.example.com'],
  ])
})

test('RFC 7541 C.4: the same requests with Huffman', () => {
  const d = new HpackDecoder()
  d.decode(hex('8286 8441 8cf1 e3c2 e5f2 3a6b a0ab 90f4 ff'))
  d.decode(hex('8286 84be 5886 a8eb 1064 9cbf'))
  expect(d.decode(hex('8287 85bf 4088 25a8 49e9 5ba9 7d7f 8925 a849 e95b b8e8 b4bf'))).toEqual([
    [':method', 'GET'],
    [':scheme', 'https'],
    [':path', '/index.html'],
    [':authority', 'www.example.com'],
    ['custom-key', 'custom-value'],
  ])
})

test('the table evicts its oldest entries past its size, and a size update shrinks it', () => {
  // a literal with incremental indexing, new name: 0x40, then name and value as plain strings
  const indexed = (name: string, value: string) =>
    Uint8Array.from([0x40, name.length, ...Buffer.from(name), value.length, ...Buffer.from(value)])
  const d = new HpackDecoder()
  d.decode(hex('3f45')) // a size update to 31 + 69 = 100 octets: two entries of 32 + 2 + 10 = 44
  d.decode(indexed('k1', 'vvvvvvvvv1'))
  d.decode(indexed('k2', 'vvvvvvvvv2'))
  d.decode(indexed('k3', 'vvvvvvvvv3'))
  expect(d.decode(hex('be bf'))).toEqual([
    ['k3', 'vvvvvvvvv3'],
    ['k2', 'vvvvvvvvv2'],
  ])
  expect(() => d.decode(hex('c0'))).toThrow(CompressionError) // k1 was evicted
  d.decode(hex('20')) // a size update to 0 empties the table
  expect(() => d.decode(hex('be'))).toThrow(CompressionError)
})

test('malformed blocks are CompressionErrors', () => {
  const d = () => new HpackDecoder()
  expect(() => d().decode(hex('80'))).toThrow(CompressionError) // index 0
  expect(() => d().decode(hex('be'))).toThrow(CompressionError) // an empty dynamic table
  expect(() => d().decode(hex('ff'))).toThrow(CompressionError) // an integer that never ends
  expect(() => d().decode(hex('ff ff ff ff ff 7f'))).toThrow(CompressionError) // an integer too large
  expect(() => d().decode(hex('40 05 61'))).toThrow(CompressionError) // a string past its block
  expect(() => d().decode(hex('3fe2 1f'))).toThrow(CompressionError) // a table size of 4,097, over the 4,096 allowed
  expect(() => d().decode(hex('40 81 fe 00'))).toThrow(CompressionError) // a Huffman name with bad padding
})

test('the blocks this server writes read back as written', () => {
  const headers: [string, string][] = [
    [':status', '200'],
    ['content-type', 'application/grpc'],
    ['grpc-status', '16'],
    ['grpc-message', 'x'.repeat(300)],
  ]
  expect(new HpackDecoder().decode(headerBlock(headers))).toEqual(headers)
})
