/**
 * flagd's gRPC sync protocol served to OpenFeature's flagd providers in in-process mode
 * (docs/openfeature.md#in-process): `SyncFlags` sends the caller's flagd document at once and again
 * after every committed change (sync-streams.ts), `FetchAllFlags` answers it once, `GetMetadata`
 * answers like flagd with no static context. Listens on `sync.host:sync.port`, on `sync.socket`, or
 * both, with grpc-js; who may sync is sync-admission.ts's decision (an API token; anonymous callers
 * over TCP only with `sync.anonymous`, on the unix socket, whose file mode (0660) decides who may
 * connect, always), what a caller receives the sync service's. A stream whose token is revoked or
 * expires is closed at the next change or within {@link RECHECK_MS}.
 * Streams are capped per connection (HTTP/2), per token and in total, and the documents in flight
 * on all streams in octets (stream-budget.ts): a new stream whose document does not fit is refused
 * RESOURCE_EXHAUSTED, an open one waits for room (sync-streams.ts).
 */

import { Server, type ServerUnaryCall, type ServerWritableStream, type ServiceError, type sendUnaryData, status } from '@grpc/grpc-js'
import { RequestCache } from '../domain/request-cache.ts'
import type { FlagSyncService, SyncCaller } from '../services/flag-sync-service.ts'
import { type FrontOptions, GRPC_SERVER_OPTIONS, type GrpcFront, listenGrpc, shutDownServers } from './grpc-listeners.ts'
import { createOversizeWatch } from './oversize-watch.ts'
import { createStreamBudget, type StreamLimits } from './stream-budget.ts'
import { createSyncAdmission } from './sync-admission.ts'
import { encodeSyncDocument, type FlagsRequest, type FlagsResponse, flagSyncService, type MetadataResponse } from './sync-protocol.ts'
import { createSyncStreams, type SyncStreamTelemetry } from './sync-streams.ts'

/** After a fan-out, changes wait this many milliseconds and then go out as one document. */
export const QUIET_MS = 10
/** How often open streams' tokens are checked again when nothing changes. */
export const RECHECK_MS = 30_000

/** Where and how the sync protocol is served (config `sync`). */
export interface SyncOptions {
  port: number | undefined
  host: string
  socket: string | undefined
  anonymous: boolean
  /** Open `SyncFlags` streams per token, in total, and unread document bytes (docs/openfeature.md#in-process); defaults otherwise. */
  limits?: Partial<StreamLimits>
  /** The front's connection limits (tests lower them). */
  front?: Omit<FrontOptions, 'http1'>
}

/** What the transport reports (a log line per stream opened and closed, the open-stream count). */
export interface SyncTelemetry extends SyncStreamTelemetry {
  /** A call failed with an internal error (a bug). */
  failed?(err: unknown): void
  /** A caller was sent a document larger than gRPC clients accept by default (once per document). */
  oversized?(caller: string, bytes: number): void
}

/** A running sync listener. */
export interface SyncServer {
  /** The TCP port listened on, when one is. */
  readonly port: number | undefined
  /** Open `SyncFlags` streams. */
  streamCount(): number
  /** Ends every stream cleanly and stops listening. */
  close(): Promise<void>
}

/**
 * Starts the listeners `options` ask for; `undefined` when sync is off. `timing` replaces the quiet
 * time after a fan-out ({@link QUIET_MS}) and the token recheck period ({@link RECHECK_MS}), for tests,
 * and gives the daemon's request cache (a small one of its own otherwise).
 */
export async function startSyncServer(
  options: SyncOptions,
  service: FlagSyncService,
  telemetry: SyncTelemetry,
  timing: { recheckMs?: number; quietMs?: number; cache?: RequestCache } = {},
): Promise<SyncServer | undefined> {
  if (options.port === undefined && options.socket === undefined) return undefined
  // each scope's document encoded once per change, kept in the daemon's request cache
  const encodings = (timing.cache ?? new RequestCache(16 * 2 ** 20)).region<Buffer>('sync-encodings', (b) => b.length)
  const definition = flagSyncService((text) => encodings.through(text, service.revision(), () => encodeSyncDocument(text)))
  const budget = createStreamBudget(options.limits)
  const logError = (err: unknown) => telemetry.failed?.(err)
  const { admit, budgetKey, tooManyStreams, noRoom } = createSyncAdmission(service, logError)
  const oversize = createOversizeWatch((caller, bytes) => telemetry.oversized?.(caller, bytes))
  const streams = createSyncStreams({
    documents: service,
    telemetry,
    budget,
    oversize,
    closePeer: (peer) => {
      for (const front of fronts) front.closePeer(peer)
    },
    quietMs: timing.quietMs ?? QUIET_MS,
    recheckMs: timing.recheckMs ?? RECHECK_MS,
  })

  const handlers = (anonymousAllowed: boolean) => ({
    async syncFlags(call: ServerWritableStream<FlagsRequest, FlagsResponse>) {
      // a stream that arrives while the daemon stops is ended at once, as the open ones were (the
      // provider reconnects to the next daemon), rather than left for the forced shutdown to cut
      if (closing) {
        call.end()
        return
      }
      let caller: SyncCaller
      try {
        caller = await admit(call.metadata, call.request, anonymousAllowed)
      } catch (err) {
        call.emit('error', err as Partial<ServiceError>)
        return
      }
      if (closing) {
        call.end() // the daemon began stopping while the caller was being admitted
        return
      }
      // streams per token and in total are capped (per connection, by HTTP/2's concurrent streams)
      const leave = budget.join(budgetKey(caller))
      if (leave === undefined) {
        call.emit('error', tooManyStreams(caller))
        return
      }
      // a new stream whose document finds no room among those in flight is refused, not queued: the
      // room is held by clients that do not read, and the provider retries later
      if (!budget.fits(service.documentFor(caller).length)) {
        leave()
        call.emit('error', noRoom())
        return
      }
      // the handler is async (admitting may wait for the store to catch up with another replica):
      // nothing may escape it as an unhandled rejection
      try {
        streams.open(call, caller, leave)
      } catch (err) {
        call.emit('error', { code: status.INTERNAL, details: `the stream could not be opened: ${(err as Error)?.message ?? err}` })
      }
    },
    async fetchAllFlags(call: ServerUnaryCall<FlagsRequest, FlagsResponse>, done: sendUnaryData<FlagsResponse>) {
      try {
        const caller = await admit(call.metadata, call.request, anonymousAllowed)
        const document = service.documentFor(caller)
        oversize.check(service.nameOf(caller), document)
        service.served(caller)
        done(null, { flagConfiguration: document })
      } catch (err) {
        done(err as ServiceError)
      }
    },
    getMetadata(_call: ServerUnaryCall<unknown, MetadataResponse>, done: sendUnaryData<MetadataResponse>) {
      done(null, { metadata: {} })
    },
  })

  const servers: Server[] = []
  const fronts: GrpcFront[] = []
  let closing = false
  let port: number | undefined
  const serve = async (where: { host: string; port: number } | { socket: string }, anonymousAllowed: boolean) => {
    const server = new Server(GRPC_SERVER_OPTIONS)
    server.addService(definition, handlers(anonymousAllowed))
    servers.push(server)
    const front = await listenGrpc(server, where, options.front ?? {})
    fronts.push(front)
    return front
  }
  try {
    if (options.port !== undefined) port = (await serve({ host: options.host, port: options.port }, options.anonymous)).port
    if (options.socket !== undefined) await serve({ socket: options.socket }, true)
  } catch (err) {
    streams.close()
    await shutDownServers(servers, fronts)
    throw new Error(`cannot serve the sync protocol: ${(err as Error).message}`)
  }

  return {
    port,
    streamCount: () => streams.count(),
    async close() {
      closing = true
      streams.close()
      await shutDownServers(servers, fronts)
    },
  }
}
