/**
 * A route as the API declares it: method and path, who may call it, the query and body it takes, its
 * documentation, and its handler. Route modules return lists of these; the pipeline serves them,
 * the router finds them, and the OpenAPI document describes them, all from the same declaration, so
 * authentication order, limits and documentation cannot drift apart between routes.
 */

import type { Static, TObject, TSchema } from '@sinclair/typebox'
import type { Permission } from '../domain/permission.ts'
import type { Principal } from '../domain/principal.ts'
import type { SmallBodyLimit } from './body-reader.ts'
import type { RequestContext } from './request-context.ts'
import type { RouteDoc } from './route-docs.ts'

/** An HTTP method a route answers. */
export type RouteMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** How a route takes its JSON body (docs/api.md#conventions): read after authentication, up to `limit` bytes. */
export interface BodySpec {
  limit: number
  /** Checked with TypeBox; the first problem is answered 400 with `details.field`. */
  schema?: TSchema
  /** A smaller limit for bodies that are always small when valid (login), answered with its own error. */
  small?: SmallBodyLimit
  /**
   * How the body is read when it is not the API's JSON (OFREP's evaluation context, which follows
   * the protocol: an empty body is an empty context). Replaces the JSON reading and `schema`.
   */
  read?: (request: Request, limit: number) => Promise<unknown>
}

/** A route of OFREP: evaluation problems get OFREP's error body instead of the envelope (docs/openfeature.md#ofrep). */
export interface OfrepErrors {
  /** The flag a single evaluation names (its error body carries it as `key`). */
  key?: (c: RequestContext) => string
}

/** A query value as it arrives: the schema checks it but nothing converts it, so a number is its digits and a boolean `true` or `false`. */
type WireValue<T> = T extends number ? string : T extends boolean ? 'true' | 'false' : T

/** The query a handler reads: its route's TypeBox schema's type as the wire carries it, or string parameters when it declares none. */
export type QueryOf<Q extends TObject | undefined> = Q extends TObject
  ? { [K in keyof Static<Q>]: WireValue<Static<Q>[K]> }
  : Record<string, string>

/** One route (see module comment); `Q` is its query schema, whose type its handler reads `c.query` as. */
export interface RouteSpec<Q extends TObject | undefined = TObject | undefined> {
  method: RouteMethod
  /** `/api/users/:userId` (a parameter) or a trailing `*` for the rest of the path, only in the last segment (router.ts). */
  path: string
  /**
   * `false` for routes that need no credential (health, login, the UI). Otherwise a valid session or
   * API token is required, and the checks below run in order, before the body is read: the order of
   * answers is route (404/405) → token (401) → permission (403) → body (415/413/400).
   */
  authenticate?: false | ((c: RequestContext) => Principal | Promise<Principal>)
  /** The permission needed; none: any authenticated caller. The services decide again with the same policy. */
  permission?: Permission
  /**
   * Routes that act on every flag (migrations, segments): a token confined to flagPrefixes is refused
   * (403). `true` for migrations; otherwise the reason the message gives.
   */
  unscoped?: true | string
  /** Large answers are sent gzipped to clients that accept it (lists, exports, bulk evaluation). */
  compress?: true
  /** A permission check that depends on the path (e.g. "your own user, or user:write"). */
  authorize?: (principal: Principal, params: Record<string, string>) => void
  /** The query it takes, checked with TypeBox (an object schema; `additionalProperties: false` refuses others). */
  query?: Q
  body?: BodySpec
  /** OFREP's routes: their evaluation problems are answered in OFREP's shape (error-handler.ts). */
  ofrep?: OfrepErrors
  /** The evaluation service's Connect routes: errors in Connect's shape, a stream's in its end-of-stream envelope (connect-protocol.ts). */
  connect?: { streaming: boolean }
  /** Its OpenAPI documentation; none for routes the document leaves out (the UI, the explorer, fallbacks). */
  docs?: RouteDoc
  /** The metrics label, when not the documented path (the 404/405 fallbacks count as `unmatched`). */
  label?: string
  /**
   * For routes sharing a method and path (a wildcard and the same wildcard with a suffix, such as a
   * flag and its `/usage`): this route serves the requests whose path (no query) this holds for;
   * the route without `when` serves the rest. Keep it cheap: it runs on every request of that path.
   */
  when?: (path: string) => boolean
  /** The answer: data (sent as JSON `200`), or a Response made with `answers.ts`. */
  handle(c: RequestContext<QueryOf<Q>>): unknown
}

/** Checks a route literal's type where it is written; its handler reads `c.query` as its `query` schema's type. */
export const route = <Q extends TObject | undefined = undefined>(spec: RouteSpec<Q>): RouteSpec => spec as RouteSpec

/** The path as the OpenAPI document and the metrics write it: `/api/users/{userId}`, `/api/flags/{flagName}`. */
export function documentedPath(spec: Pick<RouteSpec, 'path' | 'docs'>): string {
  const wildcard = spec.docs?.wildcard?.name ?? 'path'
  const suffix = spec.docs?.wildcard?.suffix ?? ''
  return spec.path.replace(/\/\*$/, `/{${wildcard}}${suffix}`).replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}
