/**
 * flagd's gRPC sync protocol served to OpenFeature's flagd providers in in-process mode
 * (docs/openfeature.md#in-process): `SyncFlags` sends the caller's flagd document at once and again after every committed change
 * (at once after a quiet spell; a burst within {@link QUIET_MS} of a fan-out merged into one
 * message, see `fan-out-pacer.ts`), `FetchAllFlags` answers it once,
 * `GetMetadata` answers like flagd with no static context. Listens on `sync.host:sync.port`, on
 * `sync.socket`, or both; what a caller may receive is the sync service's decision.
 *
 * Credentials: an API token as metadata `authorization: Bearer <token>`, or in the selector as
 * `token=<token>` (request field or `flagd-selector` header), for providers that can set nothing
 * else. Over TCP a caller without one is refused unless `sync.anonymous`; on the unix socket, whose
 * file mode (0660) decides who may connect, none is needed. A stream whose token is revoked or
 * expires is closed at the next change or within {@link RECHECK_MS}. A slow reader never holds more
 * than the document being written: documents it missed meanwhile are replaced by the newest; one
 * that leaves a document unread for a whole sweep ({@link RECHECK_MS}) has its stream ended
 * (RESOURCE_EXHAUSTED) and its connection closed. Streams are capped per connection (HTTP/2), per
 * token and in total, and the documents in flight on all streams in octets (stream-budget.ts): a new
 * stream whose document does not fit is refused RESOURCE_EXHAUSTED, an open one waits for room.
 */

import {
  type Metadata,
  Server,
  type ServerUnaryCall,
  type ServerWritableStream,
  type ServiceError,
  type sendUnaryData,
  status,
} from '@grpc/grpc-js'
import { AppError } from '../domain/errors.ts'
import { RequestCache } from '../domain/request-cache.ts'
import { grpcStatusOf } from '../http/error-handler.ts'
import type { FlagSyncService, SyncCaller } from '../services/flag-sync-service.ts'
import { createFanOutPacer } from './fan-out-pacer.ts'
import { type FrontOptions, GRPC_SERVER_OPTIONS, type GrpcFront, listenGrpc, shutDownServers } from './grpc-listeners.ts'
import { createOversizeWatch } from './oversize-watch.ts'
import { failure, secretOf } from './secret-of.ts'
import { createStreamBudget, type StreamLimits } from './stream-budget.ts'
import { encodeSyncDocument, type FlagsRequest, type FlagsResponse, flagSyncService, type MetadataResponse } from './sync-protocol.ts'

/** After a fan-out, changes wait this many milliseconds and then go out as one document. */
export const QUIET_MS = 10
/** Streams written per turn of the event loop during a fan-out (about 5 ms of writes here). */
const SLICE = 100
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
export interface SyncTelemetry {
  opened(caller: string, peer: string): void
  closed(caller: string, peer: string, why: string): void
  /** A change was written to every open stream in `seconds` (its documents built, encoded and written). */
  fannedOut?(seconds: number, streams: number): void
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

interface OpenStream {
  call: ServerWritableStream<FlagsRequest, FlagsResponse>
  caller: SyncCaller
  name: string
  peer: string
  /** The document last written. */
  sent: string
  /** A write has not been taken by the connection yet: the newest document waits for it. */
  blocked: boolean
  /** The sweep during which the write in flight began. */
  blockedAt: number
  /** Its newer document waits for room in the budget (`waiting`). */
  waiting: boolean
  ended: boolean
  /** Tells usage which flags the stream holds, and when it holds none (see `SyncAudience`). */
  holding: { sent(caller: SyncCaller): void; release(): void }
  /** Gives back the stream's place in the budget. */
  leave: () => void
  /** Octets of the document in flight, counted in the budget (0 when none). */
  unread: number
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
  const streams = new Set<OpenStream>()
  const budget = createStreamBudget(options.limits)
  // streams whose newer document waits for room in the budget, oldest first
  const waiting = new Set<OpenStream>()
  /** Gives back a stream's octets in flight, and lets the streams waiting for room try again. */
  const drain = (s: OpenStream) => {
    if (s.unread === 0) return
    budget.drained(s.unread)
    s.unread = 0
    for (const w of [...waiting]) {
      waiting.delete(w)
      w.waiting = false
      send(w)
      if (w.waiting) break // no more room
    }
  }
  const logError = (err: unknown) => telemetry.failed?.(err)

  const admit = async (metadata: Metadata, request: FlagsRequest, anonymousAllowed: boolean): Promise<SyncCaller> => {
    let caller: SyncCaller
    try {
      caller = await service.callerOf(secretOf(metadata, request))
    } catch (err) {
      throw grpcStatusOf(err, logError)
    }
    if (caller.kind === 'anonymous' && !anonymousAllowed)
      throw failure(
        status.UNAUTHENTICATED,
        'an API token is needed: authorization metadata "Bearer <token>", or the selector "token=<token>"',
      )
    return caller
  }

  const end = (s: OpenStream, why: string, error?: Partial<ServiceError>) => {
    if (s.ended) return
    s.ended = true
    streams.delete(s)
    s.holding.release()
    s.leave()
    waiting.delete(s)
    drain(s)
    telemetry.closed(s.name, s.peer, why)
    if (error) s.call.emit('error', error)
    else s.call.end()
  }

  const oversize = createOversizeWatch((caller, bytes) => telemetry.oversized?.(caller, bytes))
  /** Ends a stream whose client does not read, and closes its connection (whose buffers hold what it did not read). */
  const cutSlowReader = (s: OpenStream) => {
    end(s, 'the client does not read', failure(status.RESOURCE_EXHAUSTED, 'the client does not read its stream'))
    for (const front of fronts) front.closePeer(s.peer)
  }
  // one document at most is in flight per stream (written, not yet taken by the connection); a
  // newer one waits unbuilt, and only the newest goes once the client has read
  const send = (s: OpenStream) => {
    if (s.ended) return
    if (s.blocked || s.waiting) return
    const text = service.documentFor(s.caller)
    if (text === s.sent) return
    if (!budget.take(text.length)) {
      s.waiting = true
      waiting.add(s)
      return
    }
    oversize.check(s.name, text)
    s.sent = text
    s.holding.sent(s.caller)
    s.blocked = true
    s.blockedAt = sweeps
    s.unread = text.length
    s.call.write({ flagConfiguration: text }, () => {
      s.blocked = false
      drain(s)
      send(s)
    })
  }

  /** Checks each stream's token again (once per token for all its streams); ends those no longer valid. */
  const recheckAll = (): OpenStream[] => {
    const byToken = new Map<string, SyncCaller | undefined>()
    const alive: OpenStream[] = []
    for (const s of [...streams]) {
      const key = s.caller.kind === 'token' ? s.caller.principal.tokenId : ''
      let now = byToken.get(key)
      if (now === undefined && !byToken.has(key)) byToken.set(key, (now = service.refresh(s.caller)))
      if (now) {
        s.caller = now
        alive.push(s)
      } else end(s, 'token revoked or expired', failure(status.UNAUTHENTICATED, 'the API token was revoked or has expired'))
    }
    return alive
  }

  // a fan-out writes SLICE streams per turn of the event loop, so requests waiting meanwhile (an
  // evaluation, a health check) are answered between slices rather than after all the streams
  const pacer = createFanOutPacer((done) => {
    const started = performance.now()
    const alive = recheckAll()
    let next = 0
    const slice = () => {
      const end = Math.min(next + SLICE, alive.length)
      for (; next < end; next++) send(alive[next] as OpenStream)
      if (next < alive.length) return void setImmediate(slice)
      telemetry.fannedOut?.((performance.now() - started) / 1000, alive.length)
      done()
    }
    slice()
  }, timing.quietMs ?? QUIET_MS)
  const stopListening = service.onChange(() => pacer.notify())
  // each sweep checks tokens again, and cuts the clients that left a document unread a whole sweep
  let sweeps = 0
  const sweep = setInterval(() => {
    sweeps++
    for (const s of recheckAll()) if (s.blocked && s.blockedAt < sweeps - 1) cutSlowReader(s)
  }, timing.recheckMs ?? RECHECK_MS)
  sweep.unref?.()

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
      const leave = budget.join(caller.kind === 'token' ? caller.principal.tokenId : undefined)
      if (leave === undefined) {
        const err = new AppError(
          'TOO_MANY_REQUESTS',
          `too many open sync streams${caller.kind === 'token' ? ' for this token' : ''}; close some first`,
        )
        call.emit('error', grpcStatusOf(err, logError))
        return
      }
      // a new stream whose document finds no room among those in flight is refused, not queued: the
      // room is held by clients that do not read, and the provider retries later
      if (!budget.fits(service.documentFor(caller).length)) {
        leave()
        const err = new AppError('TOO_MANY_REQUESTS', 'the sync port holds as many unread documents as it may; retry later')
        call.emit('error', grpcStatusOf(err, logError))
        return
      }
      // the handler is async (admitting may wait for the store to catch up with another replica):
      // nothing may escape it as an unhandled rejection
      try {
        const s: OpenStream = {
          call,
          caller,
          name: service.nameOf(caller),
          peer: call.getPeer(),
          sent: '',
          blocked: false,
          blockedAt: 0,
          waiting: false,
          ended: false,
          holding: service.held(),
          leave,
          unread: 0,
        }
        streams.add(s)
        telemetry.opened(s.name, s.peer)
        call.on('cancelled', () => end(s, 'the client went away'))
        call.on('error', () => end(s, 'the connection failed'))
        send(s)
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
    stopListening()
    pacer.stop()
    clearInterval(sweep)
    await shutDownServers(servers, fronts)
    throw new Error(`cannot serve the sync protocol: ${(err as Error).message}`)
  }

  return {
    port,
    streamCount: () => streams.size,
    async close() {
      closing = true
      stopListening()
      clearInterval(sweep)
      pacer.stop()
      for (const s of [...streams]) end(s, 'shutdown')
      await shutDownServers(servers, fronts)
    },
  }
}
