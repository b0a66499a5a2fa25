/**
 * The credential of a sync request (docs/openfeature.md#in-process): an API token as metadata `authorization: Bearer
 * <token>`, or in flagd's selector as `token=<token>` (the request's `selector` field or the
 * `flagd-selector` header), for providers that can set nothing else. Malformed credentials are
 * refused with the application error that names the mistake (its gRPC status from the one table).
 */

import type { Metadata, status } from '@grpc/grpc-js'
import { InvalidError, UnauthorizedError } from '../domain/errors.ts'
import type { FlagsRequest } from './sync-protocol.ts'

/** A gRPC error as a handler emits it (grpc-js's shape, which the evaluation service's server reads too). */
export const failure = (code: status, details: string) => ({ code, details, message: details })

/**
 * The longest selector taken (docs/openfeature.md#in-process): `token=` and an API token fit many times over, and a
 * longer one is refused before it is split, so an unauthenticated caller cannot make the daemon work on megabytes.
 */
export const MAX_SELECTOR_LENGTH = 1024

/** The API token a request carries, from its metadata (grpc-js's, or anything that reads a key alike) or its selector. */
export function secretOf(metadata: Pick<Metadata, 'get'> | { get(key: string): string[] }, request: FlagsRequest): string | undefined {
  const auth = metadata.get('authorization')[0]
  if (auth !== undefined) {
    const match = /^Bearer\s+(\S+)$/i.exec(String(auth))
    if (!match) throw new UnauthorizedError('authorization metadata must be "Bearer <API token>"')
    return match[1]
  }
  // flagd's selectors are comma-separated key=value pairs; this flagd knows one key, `token`
  const raw = String(metadata.get('flagd-selector')[0] ?? request.selector ?? '')
  if (raw.length > MAX_SELECTOR_LENGTH) throw new InvalidError(`the selector is at most ${MAX_SELECTOR_LENGTH} characters`, 'selector')
  const selector = raw.trim()
  if (selector === '') return undefined
  const pairs = selector.split(',').map((pair) => pair.trim().split('='))
  const token = pairs.find(([key]) => key === 'token')?.[1]
  const unknown = pairs.find(([key, value]) => key !== 'token' || value === undefined || value === '')
  if (unknown || token === undefined)
    throw new InvalidError('the selector of this flagd is "token=<API token>" (or empty, with the token in authorization metadata)')
  return token
}
