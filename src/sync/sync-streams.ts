/**
 * The open `SyncFlags` streams of the sync protocol (docs/openfeature.md#in-process): each caller's
 * document written at once and again after every committed change (a burst within the quiet time of
 * a fan-out merged into one message, see `fan-out-pacer.ts`), at most one document in flight per
 * stream, and tokens checked again at every change and every sweep. A slow reader never holds more
 * than the document being written: documents it missed meanwhile are replaced by the newest; one
 * that leaves a document unread for a whole sweep has its stream ended (RESOURCE_EXHAUSTED) and its
 * connection closed. Every document in flight counts against the budget's octets from the first
 * one (stream-budget.ts): a stream whose newer document finds no room waits for room.
 */

import { type ServerWritableStream, type ServiceError, status } from '@grpc/grpc-js'
import type { FlagSyncService, SyncCaller } from '../services/flag-sync-service.ts'
import { createFanOutPacer } from './fan-out-pacer.ts'
import type { OversizeWatch } from './oversize-watch.ts'
import { failure } from './secret-of.ts'
import type { StreamBudget } from './stream-budget.ts'
import type { FlagsRequest, FlagsResponse } from './sync-protocol.ts'

/** Streams written per turn of the event loop during a fan-out (about 5 ms of writes here). */
const SLICE = 100

/** What the streams report (a log line per stream opened and closed, fan-outs). */
export interface SyncStreamTelemetry {
  opened(caller: string, peer: string): void
  closed(caller: string, peer: string, why: string): void
  /** A change was written to every open stream in `seconds` (its documents built, encoded and written). */
  fannedOut?(seconds: number, streams: number): void
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

/** The open streams of every listener. */
export interface SyncStreams {
  /** Starts writing `caller`'s document to `call`; `leave` gives back its place in the budget when it ends. */
  open(call: ServerWritableStream<FlagsRequest, FlagsResponse>, caller: SyncCaller, leave: () => void): void
  /** Open streams. */
  count(): number
  /** Stops following changes and sweeping, and ends every stream cleanly. */
  close(): void
}

/**
 * Follows the documents' changes for every open stream; `oversize` warns of documents too big for
 * gRPC clients' defaults (shared with one-off fetches, once per document), `closePeer` closes a slow reader's
 * connection, `quietMs` and `recheckMs` are the quiet time after a fan-out and the sweep period.
 */
export function createSyncStreams(deps: {
  documents: Pick<FlagSyncService, 'documentFor' | 'refresh' | 'held' | 'nameOf' | 'onChange'>
  telemetry: SyncStreamTelemetry
  budget: StreamBudget
  oversize: OversizeWatch
  closePeer: (peer: string) => void
  quietMs: number
  recheckMs: number
}): SyncStreams {
  const { documents: service, telemetry, budget, oversize } = deps
  const streams = new Set<OpenStream>()
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
  /** Ends a stream whose client does not read, and closes its connection (whose buffers hold what it did not read). */
  const cutSlowReader = (s: OpenStream) => {
    end(s, 'the client does not read', failure(status.RESOURCE_EXHAUSTED, 'the client does not read its stream'))
    deps.closePeer(s.peer)
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
  }, deps.quietMs)
  const stopListening = service.onChange(() => pacer.notify())
  // each sweep checks tokens again, and cuts the clients that left a document unread a whole sweep
  let sweeps = 0
  const sweep = setInterval(() => {
    sweeps++
    for (const s of recheckAll()) if (s.blocked && s.blockedAt < sweeps - 1) cutSlowReader(s)
  }, deps.recheckMs)
  sweep.unref?.()

  return {
    open(call, caller, leave) {
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
    },
    count: () => streams.size,
    close() {
      stopListening()
      clearInterval(sweep)
      pacer.stop()
      for (const s of [...streams]) end(s, 'shutdown')
    },
  }
}
