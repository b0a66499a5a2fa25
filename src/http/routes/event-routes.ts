/**
 * GET /api/events (docs/openfeature.md#ofrep): the management stream of committed flag changes, one event per
 * change, numbered by the change (audit entry) id, with catch-up from `Last-Event-ID`. A token or
 * user confined to flagPrefixes sees only its flags: a flag renamed into its scope appears as created,
 * one renamed out of it as deleted. With `?segments=true` the stream also tells of segment changes
 * (`segment.created|updated|deleted`, the same data): the web UI's segments page follows them. Off
 * by default, so a client written to docs/openfeature.md#ofrep sees exactly its events.
 */

import { t } from 'elysia'
import { can, canSeeFlag, flagScopeOf } from '../../domain/access-policy.ts'
import type { Principal } from '../../domain/principal.ts'
import { scopeKey } from '../../domain/request-cache.ts'
import type { FlagChange, FlagChangeFeed } from '../../services/flag-change-feed.ts'
import type { StreamHub } from '../event-stream.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import type { StreamCredentials } from '../stream-credentials.ts'
import { ofrepDocs } from './ofrep-docs.ts'

const EventsQuery = t.Object(
  {
    segments: t.Optional(t.BooleanString({ description: 'also tell of segment changes (segment.created|updated|deleted); default false' })),
  },
  { additionalProperties: false },
)

/** Dependencies of the management stream. */
export interface EventRouteDeps {
  changeFeed: FlagChangeFeed
  streams: StreamHub
  streamCredentials: StreamCredentials
}

/**
 * A change as `principal` sees it, or `undefined` when it concerns no flag it can see, or only
 * environments it may not read (docs/environments.md#permissions).
 */
export function visibleChange(principal: Principal, c: FlagChange): FlagChange | undefined {
  if (c.environments !== undefined && !c.environments.some((env) => can(principal, 'flag:read', env))) return undefined
  const now = canSeeFlag(principal, c.name)
  const before = c.previousName === undefined ? now : canSeeFlag(principal, c.previousName)
  if (now && before) return c
  if (!now && !before) return undefined
  if (now) return { id: c.id, type: 'flag.created', name: c.name, revision: c.revision, actor: c.actor, at: c.at }
  return { id: c.id, type: 'flag.deleted', name: c.previousName as string, revision: c.revision, actor: c.actor, at: c.at }
}

/** One change as SSE text. */
export function changeEvent(c: FlagChange): string {
  const data = {
    name: c.name,
    revision: c.revision,
    ...(c.previousName === undefined ? {} : { previousName: c.previousName }),
    actor: c.actor,
    at: c.at,
  }
  return `id: ${c.id}\nevent: ${c.type}\ndata: ${JSON.stringify(data)}\n\n`
}

const render = (principal: Principal, changes: readonly FlagChange[]) =>
  changes
    .map((c) => (c.type.startsWith('segment.') ? c : visibleChange(principal, c)))
    .filter((c): c is FlagChange => c !== undefined)
    .map(changeEvent)
    .join('')

/**
 * The catch-up of a client whose last event was `after`: the changes up to `upTo` (what the feed
 * had delivered when the stream opened; later ones reach the stream live), a page per call.
 */
function catchUp(
  feed: FlagChangeFeed,
  principal: Principal,
  after: number,
  upTo: number,
  withSegments: boolean,
): () => Promise<string | undefined> {
  let last = after
  return async () => {
    const page = await feed.page(last, upTo, { withSegments })
    if (page.length === 0) return undefined
    last = (page.at(-1) as FlagChange).id
    return render(principal, page)
  }
}

/** The management stream route. */
export function eventRoutes(deps: EventRouteDeps): RouteSpec[] {
  const { streams, streamCredentials, changeFeed } = deps
  changeFeed.subscribe(({ changes, segments }) => {
    // with segments, in commit order: a segment change and the flags it moved share a commit
    const both = segments.length === 0 ? changes : [...changes, ...segments].sort((a, b) => a.id - b.id)
    // rendered once per kind of stream, flag scope (a confined user's or token's, or none) and the
    // environments it may read: the key names them in full, so no listener gets the events rendered
    // for another
    // (docs/architecture.md#caching)
    const rendered = new Map<string, string>()
    const mentioned = [...new Set(both.flatMap((c) => c.environments ?? []))].sort()
    streams.broadcast((stream) => {
      if (stream.kind !== 'changes' && stream.kind !== 'changes+segments') return undefined
      const list = stream.kind === 'changes' ? changes : both
      if (list.length === 0) return undefined
      const p = stream.principal
      // and by the environments among these changes' that it may read
      const readable = mentioned.filter((env) => can(p, 'flag:read', env))
      const key = `${stream.kind}${scopeKey(undefined, flagScopeOf(p))}${JSON.stringify(readable)}`
      let text = rendered.get(key)
      if (text === undefined) rendered.set(key, (text = render(p, list)))
      return text === '' ? undefined : text
    })
  })

  return [
    route({
      method: 'GET',
      path: '/api/events',
      permission: 'flag:read',
      query: EventsQuery,
      async handle(c) {
        const principal = c.auth
        const last = Number(c.request.headers.get('last-event-id') ?? Number.NaN)
        const withSegments = c.query.segments === 'true'
        c.keepOpen()
        return streams.open({
          kind: withSegments ? 'changes+segments' : 'changes',
          principal,
          ...(Number.isSafeInteger(last) && last >= 0
            ? { catchUp: catchUp(changeFeed, principal, last, changeFeed.delivered, withSegments) }
            : {}),
          stillValid: () => streamCredentials.refresh(principal, 'flag:read') !== undefined,
          requestId: c.id,
        })
      },
      docs: ofrepDocs.changes,
    }),
  ]
}
