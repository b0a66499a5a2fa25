/**
 * How flagd reads its identity provider's answers (discovery, keys, tokens, userinfo): each one cut
 * at a byte cap as it arrives, so a provider that answers without end (or a huge userinfo document)
 * costs at most the cap in memory, never the whole answer (docs/single-sign-on.md#limits).
 */

import { readLimited } from '../io/read-limited.ts'

/** The most bytes flagd reads of one answer of the provider; a userinfo document with hundreds of groups is a few kB. */
export const PROVIDER_ANSWER_BYTES = 1024 * 1024

/** An answer of the provider past the cap; its sentence is for the person signing in. */
export class ProviderAnswerTooLarge extends Error {
  constructor(
    readonly url: string,
    readonly limit: number,
  ) {
    super(`the identity provider's answer from ${url} is larger than ${limit} bytes`)
  }
}

/** A `fetch` for openid-client whose answers' bodies are read here, at most `limit` bytes each. */
export function boundedFetch(limit = PROVIDER_ANSWER_BYTES, inner: typeof fetch = fetch) {
  return async (url: string, options: RequestInit): Promise<Response> => {
    const answer = await inner(url, options)
    const where = new URL(url)
    const bytes = await readLimited(answer.body, limit, () => new ProviderAnswerTooLarge(`${where.origin}${where.pathname}`, limit))
    // the body is already decoded: its former length and encoding no longer describe it
    const headers = new Headers(answer.headers)
    headers.delete('content-length')
    headers.delete('content-encoding')
    return new Response(bytes.byteLength === 0 ? null : bytes, { status: answer.status, statusText: answer.statusText, headers })
  }
}

/** The `ProviderAnswerTooLarge` behind an error openid-client raised, if there is one. */
export function tooLargeIn(err: unknown): ProviderAnswerTooLarge | undefined {
  for (let e = err, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++)
    if (e instanceof ProviderAnswerTooLarge) return e
  return undefined
}
