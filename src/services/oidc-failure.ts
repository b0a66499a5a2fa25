/**
 * How a single sign-on that failed is told (docs/single-sign-on.md#when-it-fails): a sentence for the
 * person on the sign-in page, the reason for the log; openid-client's refusals turned into sentences.
 */

import { tooLargeIn } from './oidc-fetch.ts'

/** A sign-in that failed: `sentence` is for the person, `reason` for the log. */
export class OidcFailure extends Error {
  constructor(
    readonly sentence: string,
    readonly reason: string,
  ) {
    super(sentence)
  }
}

/** What openid-client's refusals mean to a person (its codes and messages name the check that failed). */
export function sentenceOf(err: unknown): OidcFailure {
  const e = err as { code?: string; message?: string; error?: string; cause?: unknown }
  const cause = e.cause as { message?: string; code?: string } | undefined
  // the check that failed is often named by the cause ("unexpected "state" response parameter value")
  const text = `${e.code ?? ''} ${e.error ?? ''} ${e.message ?? ''} ${cause?.code ?? ''} ${cause?.message ?? ''}`
  const reason = text.replace(/\s+/g, ' ').trim()
  if (/invalid_grant/i.test(text)) return new OidcFailure('The sign-in code was already used or has expired: sign in again.', reason)
  if (/nonce/i.test(text)) return new OidcFailure('The identity token was not issued for this sign-in (nonce): sign in again.', reason)
  if (/state/i.test(text))
    return new OidcFailure('The answer of the identity provider does not belong to this sign-in (state): sign in again.', reason)
  if (tooLargeIn(err))
    return new OidcFailure('The identity provider’s answer is too large for flagd to read: ask an administrator.', reason)
  if (/"iss"|issuer/i.test(text))
    return new OidcFailure('The identity token was issued by another identity provider than the configured one (issuer).', reason)
  if (/"aud"|audience/i.test(text)) return new OidcFailure('The identity token was issued for another application (audience).', reason)
  // "exp" as the claim, never inside "unexpected"
  if (/"exp"|\bexpired\b|too old|"iat"/i.test(text)) return new OidcFailure('The identity token has expired: sign in again.', reason)
  if (/signature|JWS|JWK|key/i.test(text)) return new OidcFailure('The identity token’s signature could not be verified.', reason)
  if (/fetch|ECONN|network|timed? ?out|socket/i.test(text))
    return new OidcFailure('The identity provider cannot be reached: try again later.', reason)
  return new OidcFailure('The identity provider’s answer could not be used: sign in again, or ask an administrator.', reason)
}
