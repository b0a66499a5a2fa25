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
import {
  type Metadata,
  Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceError,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js'
import { canSeeFlag } from '../domain/access-policy.ts'
import { AppError, ForbiddenError, NotFoundError, UnauthorizedError } from '../domain/errors.ts'
import { environmentOf, type Principal, systemPrincipal } from '../domain/principal.ts'
import type { EvaluationService } from '../services/evaluation-service.ts'
import type { FlagChangeFeed } from '../services/flag-change-feed.ts'
import { EvaluationFailed } from '../services/flag-evaluator.ts'
import type { FlagSyncService } from '../services/flag-sync-service.ts'
import { evaluationService, fromStruct, RESOLVERS, type Resolver, toStruct } from './evaluation-protocol.ts'
import { bindServer, shutDownServers, tcpAddress } from './grpc-listeners.ts'
import { failure, secretOf } from './secret-of.ts'

/** Where and how the service is served (config `evaluation`). */
export interface EvaluationRpcOptions {
  port: number | undefined
  host: string
  socket: string | undefined
  anonymous: boolean
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
function statusOf(err: unknown): Partial<ServiceError> {
  if (err instanceof EvaluationFailed) return failure(status.UNKNOWN, err.message)
  if (err instanceof NotFoundError) return failure(status.NOT_FOUND, err.message)
  if (err instanceof UnauthorizedError) return failure(status.UNAUTHENTICATED, err.message)
  if (err instanceof ForbiddenError) return failure(status.PERMISSION_DENIED, err.message)
  if (err instanceof AppError) return failure(err.code === 'NOT_FOUND' ? status.NOT_FOUND : status.INVALID_ARGUMENT, err.message)
  if ((err as Partial<ServiceError>)?.code !== undefined) return err as Partial<ServiceError>
  return failure(status.INTERNAL, String((err as Error)?.message ?? err))
}

/** Starts the listeners; throws naming the address when one cannot be bound. */
export async function startEvaluationServer(deps: EvaluationRpcDeps, options: EvaluationRpcOptions): Promise<EvaluationRpcServer> {
  const principalOf = async (metadata: Metadata, anonymousAllowed: boolean): Promise<Principal> => {
    let caller: Awaited<ReturnType<FlagSyncService['callerOf']>>
    try {
      caller = await deps.sync.callerOf(secretOf(metadata, { providerId: '', selector: '' }))
    } catch (err) {
      throw statusOf(err)
    }
    if (caller.kind === 'token') return caller.principal
    if (!anonymousAllowed)
      throw failure(
        status.UNAUTHENTICATED,
        'an API token is needed: authorization metadata "Bearer <token>", or the selector "token=<token>"',
      )
    return ANONYMOUS
  }

  // the answer of each OFREP text, made once: a flag answers the same text to most contexts
  const made = new Map<string, { type: string; response: object }>()
  const resolve = (resolver: Resolver, principal: Principal, key: string, context: Record<string, unknown>) => {
    const text = deps.evaluations.oneJson(principal, key, context)
    const kept = made.get(`${resolver}\u0000${text}`)
    if (kept !== undefined) return kept.response
    const response = build(resolver, key, JSON.parse(text) as Answer)
    if (made.size >= 10_000) made.delete(made.keys().next().value as string)
    made.set(`${resolver}\u0000${text}`, { type: resolver, response })
    return response
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

  const streams = new Set<{ principal: Principal; call: ServerWritableStream<unknown, unknown> }>()
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

  const handlers = (anonymousAllowed: boolean, version: 'v1' | 'v2') => {
    const out: Record<string, unknown> = {}
    for (const resolver of RESOLVERS)
      out[resolver] = async (call: ServerUnaryCall<{ flagKey?: string; context?: object }, unknown>, done: sendUnaryData<unknown>) => {
        try {
          const principal = await principalOf(call.metadata, anonymousAllowed)
          done(null, resolve(resolver, principal, call.request.flagKey ?? '', fromStruct(call.request.context as never)))
        } catch (err) {
          done(statusOf(err) as ServiceError)
        }
      }
    if (version === 'v1')
      out.ResolveAll = async (call: ServerUnaryCall<{ context?: object }, unknown>, done: sendUnaryData<unknown>) => {
        try {
          const principal = await principalOf(call.metadata, anonymousAllowed)
          const bulk = deps.evaluations.bulk(principal, fromStruct(call.request.context as never), () => false)
          const items = bulk.unchanged ? [] : (JSON.parse(bulk.flags) as (Answer & { errorCode?: string })[])
          const flags: Record<string, unknown> = {}
          for (const item of items) {
            if (item.errorCode !== undefined) continue // ResolveAll holds the successes, as flagd's does
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
          done(null, { flags, metadata: toStruct({}) })
        } catch (err) {
          done(statusOf(err) as ServiceError)
        }
      }
    out.EventStream = async (call: ServerWritableStream<unknown, unknown>) => {
      let principal: Principal
      try {
        principal = await principalOf(call.metadata, anonymousAllowed)
      } catch (err) {
        call.emit('error', statusOf(err))
        return
      }
      const s = { principal, call }
      streams.add(s)
      const end = () => streams.delete(s)
      call.on('cancelled', end)
      call.on('error', end)
      call.on('close', end)
      call.write({ type: 'provider_ready', data: toStruct({}) })
    }
    return out
  }

  const servers: Server[] = []
  const bind = bindServer
  const serve = (server: Server, anonymousAllowed: boolean) => {
    server.addService(evaluationService('v1'), handlers(anonymousAllowed, 'v1') as never)
    server.addService(evaluationService('v2'), handlers(anonymousAllowed, 'v2') as never)
    servers.push(server)
  }
  let port: number | undefined
  try {
    if (options.port !== undefined) {
      const tcp = new Server({ 'grpc.keepalive_time_ms': 60_000 })
      serve(tcp, options.anonymous)
      port = await bind(tcp, tcpAddress(options.host, options.port))
    }
    if (options.socket !== undefined) {
      rmSync(options.socket, { force: true })
      const local = new Server()
      serve(local, true)
      await bind(local, `unix:${options.socket}`)
      chmodSync(options.socket, 0o660)
    }
  } catch (err) {
    stopFeed()
    for (const s of servers) s.forceShutdown()
    throw new Error(`cannot serve flagd's evaluation service: ${(err as Error).message}`)
  }
  return {
    port,
    async close() {
      stopFeed()
      for (const s of streams) s.call.end()
      streams.clear()
      await shutDownServers(servers)
    },
  }
}
