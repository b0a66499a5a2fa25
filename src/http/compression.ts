/**
 * Compressed answers (docs/operations.md#compression): a route that can answer large documents
 * (lists, exports, the OFREP bulk evaluation, the OpenAPI document) declares `compress`, and an
 * answer of at least `MIN_BYTES` to a client that accepts it is sent with Brotli (quality 4) or,
 * failing that, gzip (libdeflate, which Bun bundles, at level 5). Those settings give most of each
 * coding's saving for a fraction of its top setting's time. Smaller answers, other clients and every
 * other route are untouched, so the hot small answers pay nothing. `Vary: Accept-Encoding` tells
 * caches.
 */

import { brotliCompressSync, constants } from 'node:zlib'
import { gzipSync } from 'bun'

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

/** `response` in `coding` when it is large enough and not already encoded; otherwise the same answer. */
export async function compressed(response: Response, coding: Coding): Promise<Response> {
  if (response.body === null || response.headers.has('content-encoding')) return response
  const bytes = await response.arrayBuffer()
  const headers = new Headers(response.headers)
  headers.append('vary', 'Accept-Encoding')
  if (bytes.byteLength < MIN_BYTES) return new Response(bytes, { status: response.status, headers })
  headers.set('content-encoding', coding)
  headers.delete('content-length')
  const body = coding === 'br' ? brotliCompressSync(bytes, BROTLI) : gzipSync(bytes, { level: GZIP_LEVEL, library: 'libdeflate' })
  return new Response(body, { status: response.status, headers })
}
