/**
 * flagd's evaluation service (docs/openfeature.md#rpc) whatever carries it: the methods of
 * `flagd.evaluation.v1` and `v2` with their codecs and their handlers, for the gRPC listener
 * (evaluation-server.ts) and the Connect routes of the REST pipeline (http/routes/connect-routes.ts)
 * alike. `ResolveBoolean|String|Float|Int|Object` answer OFREP's evaluation (value, variant, reason,
 * metadata) in the caller's environment, `ResolveAll` (v1) OFREP bulk's successes, and
 * `EventStream` sends `provider_ready` at once and `configuration_change` after every commit.
 * Handlers throw the application's errors (AppError kinds, EvaluationFailed); each transport maps
 * them through the one table (http/error-handler.ts).
 */

import { canSeeFlag } from '../domain/access-policy.ts'
import { InvalidError, UnauthorizedError } from '../domain/errors.ts'
import type { Evaluation } from '../domain/evaluation.ts'
import { environmentOf, type Principal, systemPrincipal } from '../domain/principal.ts'
import type { EvaluationService } from '../services/evaluation-service.ts'
import type { FlagChangeFeed } from '../services/flag-change-feed.ts'
import type { FlagSyncService, SyncCaller } from '../services/flag-sync-service.ts'
import { type EvaluationMethod, evaluationMethods, fromStruct, RESOLVERS, type Resolver, toStruct } from './evaluation-protocol.ts'

/** The server's side of an `EventStream` call. */
export interface RpcStreamWriter {
  write(message: object): void
  /** Ends the call with OK. */
  end(): void
  /** Calls `listener` once when the call is over, ended here or by the client. */
  onClose(listener: () => void): void
}

/** One method: its codecs and its handler, given the caller the transport authenticated. */
export type RpcMethod = EvaluationMethod &
  (
    | { kind: 'unary'; handle(request: object, principal: Principal): object }
    | { kind: 'stream'; handle(request: object, principal: Principal, call: RpcStreamWriter): void }
  )

/** What the service answers with. */
export interface EvaluationRpcDeps {
  evaluations: EvaluationService
  /** Credentials, as the sync protocol checks them. */
  sync: FlagSyncService
  changeFeed: FlagChangeFeed
  /** The default environment's name (a token of none evaluates it). */
  defaultEnvironment: string
}

/** The service: its methods by path, the check of a caller's credential, and the end of its event streams. */
export interface EvaluationRpc {
  readonly methods: ReadonlyMap<string, RpcMethod>
  /** The caller of an API token (or none: anonymous, when `anonymousAllowed`); throws UnauthorizedError. */
  principalOf(secret: string | undefined, anonymousAllowed: boolean): Principal | Promise<Principal>
  /** Ends every event stream and stops following changes. */
  close(): void
}

/** The flag types each resolver answers (INTEGER answers ResolveFloat too; TAG none). */
const TYPES: Record<Resolver, readonly string[]> = {
  ResolveBoolean: ['BOOLEAN'],
  ResolveString: ['STRING', 'ENUM', 'AB-TEST'],
  ResolveFloat: ['NUMBER', 'INTEGER'],
  ResolveInt: ['INTEGER'],
  ResolveObject: ['OBJECT'],
}
/** proto3's zero value of each resolver's answer, for answers without a value (DISABLED, no default). */
const ZERO: Record<Resolver, unknown> = {
  ResolveBoolean: false,
  ResolveString: '',
  ResolveFloat: 0,
  ResolveInt: 0,
  ResolveObject: { fields: {} },
}

// an anonymous caller (allowed by config, or on the socket) evaluates every flag of the default environment
const ANONYMOUS: Principal = systemPrincipal('anonymous')
const NEEDS_TOKEN = 'an API token is needed: authorization metadata "Bearer <token>", or the selector "token=<token>"'

type Request = { flagKey?: string; context?: object }

/** Builds the service (see module comment). */
export function createEvaluationRpc(deps: EvaluationRpcDeps): EvaluationRpc {
  const principalFrom = (caller: SyncCaller, anonymousAllowed: boolean): Principal => {
    if (caller.kind === 'token') return caller.principal
    if (!anonymousAllowed) throw new UnauthorizedError(NEEDS_TOKEN)
    return ANONYMOUS
  }

  const build = (resolver: Resolver, key: string, answer: Evaluation) => {
    const type = String(answer.metadata?.type ?? '')
    if (!TYPES[resolver].includes(type))
      throw new InvalidError(`flag ${key} is of type ${type}; ${resolver} answers ${TYPES[resolver].join(' or ') || 'none'}`)
    const value =
      answer.value === undefined
        ? ZERO[resolver]
        : resolver === 'ResolveObject'
          ? toStruct(answer.value as Record<string, unknown>)
          : answer.value
    return { value, reason: answer.reason, variant: answer.variant ?? '', metadata: toStruct(answer.metadata ?? {}) }
  }

  const resolveAll = (principal: Principal, context: Record<string, unknown>) => {
    const flags: Record<string, unknown> = {}
    for (const [, answer] of deps.evaluations.all(principal, context)) {
      const item = answer.result
      if (item === undefined) continue // ResolveAll holds the successes, as flagd's does
      // a TAG flag (a list) is served by no resolver: left out like any flag it cannot serve (docs/openfeature.md#rpc)
      if (Array.isArray(item.value) || item.metadata?.type === 'TAG') continue
      const v = item.value
      const value =
        typeof v === 'boolean'
          ? { boolValue: v }
          : typeof v === 'string'
            ? { stringValue: v }
            : typeof v === 'number'
              ? { doubleValue: v }
              : v !== undefined && v !== null && typeof v === 'object' && !Array.isArray(v)
                ? { objectValue: toStruct(v as Record<string, unknown>) }
                : {}
      flags[item.key] = { reason: item.reason, variant: item.variant ?? '', ...value, metadata: toStruct(item.metadata ?? {}) }
    }
    // the flags it carried count as served in-process (docs/openfeature.md#in-process-usage)
    deps.sync.answered(principal, Object.keys(flags))
    return { flags, metadata: toStruct({}) }
  }

  const streams = new Set<{ principal: Principal; call: RpcStreamWriter }>()
  const stopFeed = deps.changeFeed.subscribe((batch) => {
    for (const s of streams) {
      const env = environmentOf(s.principal) ?? deps.defaultEnvironment
      const keys = batch.changes
        .filter((c) => (c.environments === undefined || c.environments.includes(env)) && canSeeFlag(s.principal, c.name))
        .map((c) => c.name)
      if (keys.length === 0) continue
      s.call.write({ type: 'configuration_change', data: toStruct({ flags: Object.fromEntries(keys.map((k) => [k, {}])) }) })
    }
  })

  const context = (r: Request) => fromStruct(r.context as never)
  const methods = new Map<string, RpcMethod>()
  for (const version of ['v1', 'v2'] as const)
    for (const m of evaluationMethods(version)) {
      if ((RESOLVERS as readonly string[]).includes(m.name)) {
        const resolver = m.name as Resolver
        methods.set(m.path, {
          ...m,
          kind: 'unary',
          handle: (r: Request, p) => {
            const key = r.flagKey ?? ''
            const answer = build(resolver, key, deps.evaluations.one(p, key, context(r)).result)
            // the flag counts as served (docs/openfeature.md#in-process-usage)
            deps.sync.answered(p, [key])
            return answer
          },
        })
      } else if (m.name === 'ResolveAll') {
        methods.set(m.path, { ...m, kind: 'unary', handle: (r: Request, p) => resolveAll(p, context(r)) })
      } else if (m.name === 'EventStream') {
        methods.set(m.path, {
          ...m,
          kind: 'stream',
          handle: (_r, principal, call) => {
            const s = { principal, call }
            streams.add(s)
            call.onClose(() => streams.delete(s))
            call.write({ type: 'provider_ready', data: toStruct({}) })
          },
        })
      }
    }

  return {
    methods,
    principalOf(secret, anonymousAllowed) {
      const caller = deps.sync.callerOf(secret)
      return caller instanceof Promise ? caller.then((c) => principalFrom(c, anonymousAllowed)) : principalFrom(caller, anonymousAllowed)
    },
    close() {
      stopFeed()
      for (const s of streams) s.call.end()
      streams.clear()
    },
  }
}
