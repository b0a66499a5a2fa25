/**
 * The UI's API client: openapi-fetch typed by the types openapi-typescript generated from the served
 * OpenAPI document (`api-types.ts`), so every call is checked against the API the daemon describes.
 * The session token lives in this module and in session storage (never a cookie, never a URL).
 */

import createClient from 'openapi-fetch'
import type { operations, paths } from './generated/api-types.ts'

const KEY = 'flagd.token'
let token: string | null = sessionStorage.getItem(KEY)

/** The typed client; every request carries the session token when there is one. */
export const api = createClient<paths>({ baseUrl: location.origin })
api.use({
  onRequest({ request }) {
    if (token) request.headers.set('authorization', `Bearer ${token}`)
    request.headers.set('x-flagd-client', 'ui') // changes made here are audited as source "ui"
    return request
  },
})

const expiredListeners = new Set<() => void>()

/** A network failure answers like the service would, so every page shows a sentence, never nothing. */
api.use({
  onError({ error }) {
    const message = `flagd cannot be reached (${(error as Error)?.message ?? error}); check that the daemon is running`
    return new Response(JSON.stringify({ error: { code: 'UNAVAILABLE', message } }), {
      status: 503,
      headers: { 'content-type': 'application/json' },
    })
  },
  onResponse({ request, response }) {
    // the session ended elsewhere (expired, signed out in another tab, ended by an admin): back to sign-in
    if (response.status === 401 && token && !request.url.endsWith('/api/login')) session.expire()
    return response
  },
})

export const session = {
  /** Calls `listener` when the service refuses the session token; returns the unsubscribe function. */
  onExpired(listener: () => void): () => void {
    expiredListeners.add(listener)
    return () => expiredListeners.delete(listener)
  },
  /** The service refused the token: drop it and tell the listeners. */
  expire() {
    if (!token) return
    session.set(null)
    for (const listener of expiredListeners) listener()
  },
  get token() {
    return token
  },
  set(value: string | null) {
    token = value
    if (value) sessionStorage.setItem(KEY, value)
    else sessionStorage.removeItem(KEY)
  },
}

/** The service's own words for an error answer. */
export function messageOf(error: unknown, fallback = 'the request failed'): string {
  const e = error as { error?: { message?: string } } | undefined
  return e?.error?.message ?? fallback
}

/** The caller as `GET /api/me` describes it: a user, or an API token. */
export type Me = operations['getMe']['responses'][200]['content']['application/json']

/** A permission name, as the API's schemas list them. */
export type Permission = Body<'createToken'>['permissions'][number]

/** The JSON request body of an operation, as the API describes it. */
export type Body<Op extends keyof operations> = operations[Op] extends { requestBody?: { content: { 'application/json': infer B } } }
  ? B
  : never
