/**
 * Compressed answers (docs/operations.md#compression): a route that can answer large documents
 * (lists, exports, the OFREP bulk evaluation, the OpenAPI document) declares `compress`, and an
 * answer of at least `MIN_BYTES` to a client that accepts it is sent with Brotli (quality 4) or,
 * failing that, gzip (libdeflate, which Bun bundles, at level 5). Those settings give most of each
 * coding's saving for a fraction of its top setting's time. Smaller answers, other clients and every
 * other route are untouched, so the hot small answers pay nothing. `Vary: Accept-Encoding` tells
 * caches.
 *
 * An answer with an `ETag` is asked for again and again (pollers, providers downloading their
 * configuration), so its compressed bytes are kept in the request cache and compressed once
 * (docs/architecture.md#caching): found by the coding, the ETag and the answer's length and ends,
 * and served only when the kept answer's whole text is the very one sent now, so one caller never
 * gets another's answer even where an ETag alone does not name every byte.
 */

import { brotliCompressSync, constants } from 'node:zlib'
import { gzipSync } from 'bun'
import { type RequestCache, textBytes } from '../domain/request-cache.ts'
import { taggedText } from './answers.ts'

/** Below this, the framing and the CPU time are not worth it. */
export const MIN_BYTES = 4096

const GZIP_LEVEL = 5
const BROTLI = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } }

/** A coding flagd sends. */
export type Coding = 'br' | 'gzip'

/** The q-value `accept` (an Accept-Encoding header) gives `coding`: 0 when absent or refused. */
function quality(accept: string, coding: Coding): number {
  for (const part of accept.split(',')) {
    const [name, ...params] = part.trim().split(';')
    if (name?.trim().toLowerCase() !== coding) continue
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='))
    return q === undefined ? 1 : Number(q.slice(2)) || 0
  }
  return 0
}

/** The coding to answer `accept` with: Brotli when accepted at least as well as gzip, else gzip, else none. */
export function codingFor(accept: string | null): Coding | undefined {
  if (accept === null || (!accept.includes('br') && !accept.includes('gzip'))) return undefined
  const br = quality(accept, 'br')
  const gzip = quality(accept, 'gzip')
  if (br > 0 && br >= gzip) return 'br'
  return gzip > 0 ? 'gzip' : undefined
}

/** `bytes` in `coding`, with the settings above: the plain twin of what the cache keeps. */
export function encode(bytes: Uint8Array<ArrayBuffer>, coding: Coding): Uint8Array<ArrayBuffer> {
  return coding === 'br' ? brotliCompressSync(bytes, BROTLI) : gzipSync(bytes, { level: GZIP_LEVEL, library: 'libdeflate' })
}

/** Compresses an answer: `response` in `coding` when it is large enough and not already encoded, otherwise the same answer. */
export type Compress = (response: Response, coding: Coding) => Promise<Response>

/** An answer kept: the text it was made from (to compare with) and its encoding. */
interface Kept {
  identity: string
  encoded: Uint8Array<ArrayBuffer>
}

/** How much of each end of an answer its key samples (see `keyOf`). */
const SAMPLE = 2048

/**
 * The key of `text` sent with `etag` in `coding`: its length and a digest of both ends sampled (an
 * OFREP bulk answer ends with its caller's stream ticket), so that different answers under one
 * ETag do not push one another out. The key only finds an entry; the whole text compared decides.
 */
const keyOf = (coding: Coding, etag: string, text: string): string =>
  `${coding} ${text.length} ${Bun.hash(text.length <= 2 * SAMPLE ? text : text.slice(0, SAMPLE) + text.slice(-SAMPLE)).toString(36)} ${etag}`

/**
 * The compressor of the pipeline: answers with an ETag are encoded once and kept in `cache` for
 * `revision()` (the flags' revision: docs/architecture.md#caching); `encoder` is `encode` (tests count its calls).
 */
export function createCompressor(cache: RequestCache, revision: () => number, encoder = encode): Compress {
  const kept = cache.region<Kept>('compressed-answers', (k) => textBytes(k.identity) + k.encoded.byteLength)
  const answer = (response: Response, headers: Headers, body: Uint8Array<ArrayBuffer>, coding: Coding): Response => {
    headers.set('content-encoding', coding)
    headers.delete('content-length')
    return new Response(body, { status: response.status, headers })
  }
  return async (response, coding) => {
    // the text the answer was made from, when it was noted (a large one with an ETag): then its body
    // is never touched (even asking for `body` makes a stream, which costs more than the rest)
    const noted = taggedText(response)
    if ((noted === undefined && response.body === null) || response.headers.has('content-encoding')) return response
    const headers = new Headers(response.headers)
    headers.append('vary', 'Accept-Encoding')
    const etag = headers.get('etag')
    if (etag === null) {
      const bytes = new Uint8Array(await response.arrayBuffer())
      if (bytes.byteLength < MIN_BYTES) return new Response(bytes, { status: response.status, headers })
      return answer(response, headers, encoder(bytes, coding), coding)
    }
    // read back only when it was not noted: a kept encoding is found without reading, encoding or copying the answer
    const text = noted ?? (await response.text())
    if (text.length < MIN_BYTES && Buffer.byteLength(text) < MIN_BYTES) return new Response(text, { status: response.status, headers })
    const key = keyOf(coding, etag, text)
    const at = revision()
    const found = kept.get(key, at)
    if (found !== undefined && found.identity === text) return answer(response, headers, found.encoded, coding)
    const made = encoder(new TextEncoder().encode(text), coding)
    kept.set(key, at, { identity: text, encoded: made })
    return answer(response, headers, made, coding)
  }
}
