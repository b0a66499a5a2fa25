/**
 * flagd's evaluation service over gRPC (docs/openfeature.md#rpc), so OpenFeature's flagd providers
 * in their default RPC mode work unchanged: `ResolveBoolean|String|Float|Int|Object` (v1 and v2),
 * `ResolveAll` (v1) and `EventStream` (`provider_ready` at once, `configuration_change` with the
 * changed flag keys after every commit). Every answer is OFREP's (the same evaluation service: value,
 * variant, reason, metadata), in the token's environment; errors carry flagd's gRPC codes.
 * Credentials as the sync protocol's (`secret-of.ts`): an API token in `authorization` metadata or
 * the selector; `evaluation.anonymous` or the unix socket for providers that send none.
 */

import { chmodSync, rmSync } from 'node:fs'
import { status } from '@grpc/grpc-js'
import { canSeeFlag } from '../domain/access-policy.ts'
import { AppError, ForbiddenError, NotFoundError, UnauthorizedError } from '../domain/errors.ts'
import { environmentOf, type Principal, systemPrincipal } from '../domain/principal.ts'
import type { EvaluationService } from '../services/evaluation-service.ts'
import type { FlagChangeFeed } from '../services/flag-change-feed.ts'
import { EvaluationFailed } from '../services/flag-evaluator.ts'
import type { FlagSyncService, SyncCaller } from '../services/flag-sync-service.ts'
import { evaluationMethods, fromStruct, RESOLVERS, type Resolver, toStruct } from './evaluation-protocol.ts'
import {
  type GrpcFailure,
  type GrpcListener,
  type GrpcMetadata,
  type GrpcMethod,
  type GrpcWriter,
  listenGrpc,
} from './rpc-server/grpc-server.ts'
import { failure, secretOf } from './secret-of.ts'

/** Where and how the service is served (config `evaluation`). */
export interface EvaluationRpcOptions {
  port: number | undefined
  host: string
  socket: string | undefined
  anonymous: boolean
  /** Origins whose web pages may call the Connect side (config `cors.origins`, as for OFREP). */
  corsOrigins?: readonly string[]
}

/** What the service answers with. */
export interface EvaluationRpcDeps {
  evaluations: EvaluationService
  /** Credentials, as the sync protocol checks them. */
  sync: FlagSyncService
  changeFeed: FlagChangeFeed
  /** The default environment's name (a token of none evaluates it). */
  defaultEnvironment: string
}

/** A running evaluation listener. */
export interface EvaluationRpcServer {
  readonly port: number | undefined
  close(): Promise<void>
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

/** OFREP's answer as the service gives it, parsed. */
type Answer = { key: string; value?: unknown; reason: string; variant?: string; metadata?: Record<string, unknown> }

/** The gRPC status of a refusal (flagd's mapping). */
function statusOf(err: unknown): GrpcFailure {
  if (err instanceof EvaluationFailed) return failure(status.UNKNOWN, err.message)
  if (err instanceof NotFoundError) return failure(status.NOT_FOUND, err.message)
  if (err instanceof UnauthorizedError) return failure(status.UNAUTHENTICATED, err.message)
  if (err instanceof ForbiddenError) return failure(status.PERMISSION_DENIED, err.message)
  if (err instanceof AppError) return failure(err.code === 'NOT_FOUND' ? status.NOT_FOUND : status.INVALID_ARGUMENT, err.message)
  if (typeof (err as GrpcFailure)?.code === 'number') return err as GrpcFailure
  return failure(status.INTERNAL, String((err as Error)?.message ?? err))
}

/** Starts the listeners; throws naming the address when one cannot be bound. */
export async function startEvaluationServer(deps: EvaluationRpcDeps, options: EvaluationRpcOptions): Promise<EvaluationRpcServer> {
  const principalOf = (metadata: GrpcMetadata, anonymousAllowed: boolean): Principal | Promise<Principal> => {
    const caller = deps.sync.callerOf(secretOf(metadata, { providerId: '', selector: '' }))
    return caller instanceof Promise ? caller.then((c) => principalFrom(c, anonymousAllowed)) : principalFrom(caller, anonymousAllowed)
  }
  const principalFrom = (caller: SyncCaller, anonymousAllowed: boolean): Principal => {
    if (caller.kind === 'token') return caller.principal
    if (!anonymousAllowed)
      throw failure(
        status.UNAUTHENTICATED,
        'an API token is needed: authorization metadata "Bearer <token>", or the selector "token=<token>"',
      )
    return ANONYMOUS
  }

  // OFREP's answer, read into the resolver's message; the flag counts as served (docs/openfeature.md#in-process-usage)
  const resolve = (resolver: Resolver, principal: Principal, key: string, context: Record<string, unknown>) => {
    const answer = build(resolver, key, JSON.parse(deps.evaluations.oneJson(principal, key, context)) as Answer)
    deps.sync.answered(principal, [key])
    return answer
  }
  const build = (resolver: Resolver, key: string, answer: Answer) => {
    const type = String(answer.metadata?.type ?? '')
    if (!TYPES[resolver].includes(type))
      throw failure(
        status.INVALID_ARGUMENT,
        `flag ${key} is of type ${type}; ${resolver} answers ${TYPES[resolver].join(' or ') || 'none'}`,
      )
    const value =
      answer.value === undefined
        ? ZERO[resolver]
        : resolver === 'ResolveObject'
          ? toStruct(answer.value as Record<string, unknown>)
          : answer.value
    return { value, reason: answer.reason, variant: answer.variant ?? '', metadata: toStruct(answer.metadata ?? {}) }
  }

  const streams = new Set<{ principal: Principal; call: GrpcWriter }>()
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

  /** Runs `then` with the caller's principal: at once when the token is known, else once it is looked up. */
  const withPrincipal = <T>(metadata: GrpcMetadata, anonymousAllowed: boolean, then: (p: Principal) => T): T | Promise<T> => {
    const caller = principalOf(metadata, anonymousAllowed)
    return caller instanceof Promise ? caller.then(then) : then(caller)
  }

  const resolveAll = (principal: Principal, context: Record<string, unknown>) => {
    const bulk = deps.evaluations.bulk(principal, context, () => false)
    const items = bulk.unchanged ? [] : (JSON.parse(bulk.flags) as (Answer & { errorCode?: string })[])
    const flags: Record<string, unknown> = {}
    for (const item of items) {
      if (item.errorCode !== undefined) continue // ResolveAll holds the successes, as flagd's does
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
    deps.sync.answered(principal, Object.keys(flags))
    return { flags, metadata: toStruct({}) }
  }

  /** A unary handler whose refusals carry flagd's statuses, thrown or rejected. */
  const mapped =
    <R>(handle: (request: R, metadata: GrpcMetadata) => object | Promise<object>) =>
    (request: object, metadata: GrpcMetadata): object | Promise<object> => {
      try {
        const answer = handle(request as R, metadata)
        return answer instanceof Promise ? answer.catch((err) => Promise.reject(statusOf(err))) : answer
      } catch (err) {
        throw statusOf(err)
      }
    }

  /** Every method of both versions, keyed by path, for one listener. */
  const methodsFor = (anonymousAllowed: boolean): Map<string, GrpcMethod> => {
    const methods = new Map<string, GrpcMethod>()
    for (const version of ['v1', 'v2'] as const)
      for (const m of evaluationMethods(version)) {
        const codec = {
          decode: m.decodeRequest,
          encode: m.encodeResponse,
          decodeJson: m.decodeRequestJson,
          encodeJson: m.encodeResponseJson,
        }
        type Request = { flagKey?: string; context?: object }
        const context = (r: Request) => fromStruct(r.context as never)
        if ((RESOLVERS as readonly string[]).includes(m.name)) {
          const resolver = m.name as Resolver
          methods.set(m.path, {
            ...codec,
            kind: 'unary',
            handle: mapped((r: Request, metadata) =>
              withPrincipal(metadata, anonymousAllowed, (p) => resolve(resolver, p, r.flagKey ?? '', context(r))),
            ),
          })
        } else if (m.name === 'ResolveAll') {
          methods.set(m.path, {
            ...codec,
            kind: 'unary',
            handle: mapped((r: Request, metadata) => withPrincipal(metadata, anonymousAllowed, (p) => resolveAll(p, context(r)))),
          })
        } else if (m.name === 'EventStream') {
          methods.set(m.path, {
            ...codec,
            kind: 'stream',
            handle: (_r, metadata, call) => {
              const open = (principal: Principal) => {
                const s = { principal, call }
                streams.add(s)
                call.onClose(() => streams.delete(s))
                call.write({ type: 'provider_ready', data: toStruct({}) })
              }
              try {
                const opened = withPrincipal(metadata, anonymousAllowed, open)
                if (opened instanceof Promise) opened.catch((err) => call.fail(statusOf(err)))
              } catch (err) {
                call.fail(statusOf(err))
              }
            },
          })
        }
      }
    return methods
  }

  const listeners: GrpcListener[] = []
  let port: number | undefined
  try {
    if (options.port !== undefined) {
      const tcp = listenGrpc({ hostname: options.host, port: options.port }, methodsFor(options.anonymous), {
        corsOrigins: options.corsOrigins ?? [],
      })
      listeners.push(tcp)
      port = tcp.port
    }
    if (options.socket !== undefined) {
      rmSync(options.socket, { force: true })
      listeners.push(listenGrpc({ unix: options.socket }, methodsFor(true), { corsOrigins: options.corsOrigins ?? [] }))
      chmodSync(options.socket, 0o660)
    }
  } catch (err) {
    stopFeed()
    await Promise.all(listeners.map((l) => l.close()))
    throw new Error(`cannot serve flagd's evaluation service: ${(err as Error).message}`)
  }
  return {
    port,
    async close() {
      stopFeed()
      for (const s of streams) s.call.end()
      streams.clear()
      await Promise.all(listeners.map((l) => l.close()))
    },
  }
}
