/**
 * In-process evaluation's use cases (docs/openfeature.md#in-process): who may receive the flag definitions over
 * flagd's sync protocol, the flagd document (docs/targeting.md#flagd-format) each caller receives, and when it changes. The
 * gRPC transport (`src/sync/`) only carries what this decides.
 *
 * A caller is an API token with `flag:evaluate` (or `flag:read`); its `flagPrefixes` limit the flags
 * sent, and the segments sent are those the sent flags use, so a scoped token learns nothing of
 * other flags. Without a credential a caller is anonymous, allowed only where the transport says so
 * (the unix socket, guarded by the file system, or `sync.anonymous: true`). An environment's whole
 * document is its served snapshot's (`served-snapshot.ts`, encoded once per revision); a document
 * confined to flag prefixes is kept per scope in the request cache (docs/architecture.md#caching),
 * for the revision of flags and segments: a change builds each scope's document once, whatever the
 * number of streams.
 */

import { can, canSeeFlag, flagScopeOf } from '../domain/access-policy.ts'
import { ForbiddenError, UnauthorizedError } from '../domain/errors.ts'
import type { Flag } from '../domain/flag.ts'
import { buildFlagdDocument } from '../domain/flagd-document.ts'
import { environmentOf, type Principal, type TokenPrincipal } from '../domain/principal.ts'
import { type RequestCache, scopeKey, textBytes } from '../domain/request-cache.ts'
import { referencedSegments } from '../domain/segment.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import type { ApiTokenService } from './api-token-service.ts'
import type { FlagChangeFeed } from './flag-change-feed.ts'
import { sortedSegments } from './migration-export.ts'
import { createServedSnapshots, flagdEncodings, type ServedSnapshots } from './served-snapshot.ts'
import type { AudienceStream, HeldFlags, SyncAudience } from './sync-audience.ts'

/** Who receives flags: an API token, or nobody in particular (where the transport allows it). */
export type SyncCaller = { kind: 'token'; principal: TokenPrincipal } | { kind: 'anonymous' }

/** The use cases. */
export interface FlagSyncService {
  /**
   * The caller of a request that gave `secret` (an API token, from metadata or the selector), or
   * anonymous when none was given. `UnauthorizedError` for a bad, revoked or expired token,
   * `ForbiddenError` for one that may not evaluate flags.
   */
  callerOf(secret: string | undefined): SyncCaller | Promise<SyncCaller>
  /** The caller as of now: `undefined` once its token is revoked, expired or lost the permission. */
  refresh(caller: SyncCaller): SyncCaller | undefined
  /** The flagd document the caller receives, as text. */
  documentFor(caller: SyncCaller): string
  /** The revision of flags and segments the documents are of (what moves when one changes). */
  revision(): number
  /** Calls `listener` after every committed change to flags or segments; returns the unsubscribe. */
  onChange(listener: () => void): () => void
  /** A stream opened: tell it each time `caller`'s document is sent on it (its flags are then held), and when it closes. */
  held(): { sent(caller: SyncCaller): void; release(): void }
  /** A one-off document was sent to `caller` (FetchAllFlags): the flags it carried were served. */
  served(caller: SyncCaller): void
  /** flagd's evaluation service answered `flags` to `principal` (docs/openfeature.md#in-process-usage). */
  answered(principal: Principal, flags: readonly string[]): void
  /** The label of a caller in logs: the token's name, or `anonymous`. */
  nameOf(caller: SyncCaller): string
}

/** What the service needs. */
export interface FlagSyncDeps {
  store: Store
  apiTokens: ApiTokenService
  changeFeed: FlagChangeFeed
  environment: string
  /** Which flags in-process providers hold, for usage. */
  audience?: SyncAudience
  /** Where each scope's document is kept between streams. */
  cache: RequestCache
  /** What each environment serves, shared with evaluation (default: the service's own). */
  snapshots?: ServedSnapshots
}

/** The revision of what a flagd document is made of. */
const documentRevision = (snapshot: Snapshot) => Math.max(snapshot.revisionOf('flags'), snapshot.revisionOf('segments'))

export function createFlagSyncService(deps: FlagSyncDeps): FlagSyncService {
  const { store, apiTokens, changeFeed, environment } = deps
  const snapshots = deps.snapshots ?? createServedSnapshots()
  // each document with the flags it carries (their names are in its text too: twice its bytes)
  const documents = deps.cache.region<{ text: string; flags: HeldFlags }>('sync-documents', (d) => 2 * textBytes(d.text))
  /** The environment usage counts a principal's in (`''`: the default one). */
  const usageEnv = (principal: Principal | undefined) => {
    const env = principal === undefined ? undefined : environmentOf(principal)
    return env === undefined || env === environment ? '' : env
  }

  const check = (principal: TokenPrincipal): SyncCaller => {
    const env = environmentOf(principal) ?? environment
    if (!can(principal, 'flag:evaluate') && !can(principal, 'flag:evaluate', env)) throw new ForbiddenError('flag:evaluate', env)
    return { kind: 'token', principal }
  }

  return {
    callerOf(secret) {
      if (secret === undefined || secret === '') return { kind: 'anonymous' }
      try {
        return check(apiTokens.authenticate(secret))
      } catch (err) {
        // a token made on another replica a moment ago: catch up once before refusing, as HTTP does
        if (!(err instanceof UnauthorizedError)) throw err
        return store.refresh().then(() => check(apiTokens.authenticate(secret)))
      }
    },

    refresh(caller) {
      if (caller.kind === 'anonymous') return caller
      try {
        return check(apiTokens.principalById(caller.principal.tokenId) as TokenPrincipal)
      } catch (err) {
        if (err instanceof UnauthorizedError || err instanceof ForbiddenError) return undefined
        throw err
      }
    },

    documentFor: (caller) => documentOf(caller).text,

    revision: () => documentRevision(store.committed()),

    onChange(listener) {
      return changeFeed.subscribe(() => listener())
    },

    nameOf: (caller) => (caller.kind === 'token' ? caller.principal.name : 'anonymous'),
    held() {
      const stream: AudienceStream | undefined = deps.audience?.stream()
      return {
        sent: (caller) => stream?.sent(documentOf(caller).flags),
        release: () => stream?.release(),
      }
    },
    served(caller) {
      const { flags } = documentOf(caller)
      deps.audience?.served(flags.env, flags.names)
    },
    answered(principal, flags) {
      deps.audience?.served(usageEnv(principal), flags)
    },
  }

  function documentOf(caller: SyncCaller): { text: string; flags: HeldFlags } {
    const snapshot = store.committed()
    const scope = caller.kind === 'anonymous' ? [] : flagScopeOf(caller.principal)
    const env = caller.kind === 'token' ? environmentOf(caller.principal) : undefined
    // views, the default environment's too: a change confined to another environment leaves the text as it was
    const served = snapshots.of(snapshot, env ?? environment)
    // named after the environment it serves, as the flagd export is (docs/environments.md#evaluation)
    const name = env ?? environment
    const usage = usageEnv(caller.kind === 'token' ? caller.principal : undefined)
    if (caller.kind === 'anonymous' || scope.length === 0) {
      const whole = served.flagd(name)
      return { text: whole.sync, flags: { env: usage, names: whole.names } }
    }
    return documents.through(scopeKey(env, scope), documentRevision(snapshot), () => {
      const flags: Flag[] = served.names.map((n) => served.flags.get(n) as Flag).filter((f) => canSeeFlag(caller.principal, f.name))
      // only the segments these flags use, and those they use in turn
      const rules = new Map([...snapshot.segments.values()].map((s) => [s.name, s.rule as unknown]))
      const used = new Set<string>()
      const visit = (name: string) => {
        if (used.has(name)) return
        used.add(name)
        for (const next of referencedSegments(rules.get(name))) visit(next)
      }
      for (const f of flags) for (const name of referencedSegments(f.targeting)) visit(name)
      const segments = sortedSegments(snapshot).filter((s) => used.has(s.name))
      // the flags it carries: what usage counts as served (a TAG flag, left out, is not)
      const made = flagdEncodings(buildFlagdDocument(flags, segments, name))
      return { text: made.sync, flags: { env: usage, names: made.names } }
    })
  }
}
