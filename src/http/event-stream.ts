/**
 * Server-sent event streams (docs/openfeature.md#ofrep): one `text/event-stream` response per client, kept by a
 * hub that sends every stream a `: ping` comment on a shared timer (so proxies keep them open),
 * checks each client's credential at every event and heartbeat (a revoked one is closed then), and
 * closes them all at shutdown so that they never hold up graceful stop.
 */

import type { Principal } from '../domain/principal.ts'

/** One open stream. */
export interface EventStream {
  /** Which stream: OFREP's (`/ofrep/v1/events`) or the management one (`/api/events`, with segments when asked). */
  readonly kind: StreamKind
  readonly principal: Principal
  /** Sends pre-formatted SSE text; false (and the stream closed) when the client is gone. */
  send(text: string): boolean
  close(): void
  readonly closed: boolean
}

/** The event streams. */
export type StreamKind = 'ofrep' | 'changes' | 'changes+segments'

/** What a route gives the hub to open a stream. */
export interface StreamOptions {
  kind: StreamKind
  principal: Principal
  /** Checks the credential again; a falsy answer or a throw closes the stream. */
  stillValid(): boolean
  /**
   * Catch-up text, pulled a piece at a time as the client reads (`undefined` when done): a client
   * resuming far behind is fed page by page, never holding the whole backlog. Events broadcast
   * meanwhile wait (within {@link MAX_BACKLOG_BYTES}) and follow the catch-up.
   */
  catchUp?: () => Promise<string | undefined>
  /** Called once when the stream closes, for whatever reason. */
  onClose?(stream: EventStream): void
  /** The request's id, sent back as `X-Request-Id` like on every answer. */
  requestId: string
}

/** The registry of open streams. */
export interface StreamHub {
  /** The streaming response for a new client. */
  open(options: StreamOptions): Response
  /** Sends `text` to every open stream for which `filter` holds, checking each credential first. */
  broadcast(text: (stream: EventStream) => string | undefined): void
  /** Closes every stream and refuses new ones (shutdown). */
  closeAll(): void
  readonly size: number
}

const encoder = new TextEncoder()

/**
 * Bytes a client may leave unread (events queued for it, or waiting behind its catch-up) before its
 * stream is closed: a client that stopped reading cannot make the daemon hold every later event.
 * It reconnects with `Last-Event-ID` and catches up from the audit log.
 */
export const MAX_BACKLOG_BYTES = 1024 * 1024

/** Queued bytes below which the stream asks for the next catch-up piece. */
const HIGH_WATER_BYTES = 64 * 1024

export const SSE_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  // tells nginx and similar proxies not to buffer the stream
  'x-accel-buffering': 'no',
}

/** Creates a hub whose heartbeat runs every `heartbeatMs`. */
export function createStreamHub(heartbeatMs: number): StreamHub {
  const open = new Set<EventStream & { stillValid(): boolean }>()
  let accepting = true
  let timer: ReturnType<typeof setInterval> | undefined

  const deliver = (stream: EventStream & { stillValid(): boolean }, text: string) => {
    let valid = false
    try {
      valid = stream.stillValid()
    } catch {
      valid = false
    }
    if (!valid) stream.close()
    else stream.send(text)
  }
  const ensureTimer = () => {
    if (timer || !accepting) return
    timer = setInterval(() => {
      for (const stream of [...open]) deliver(stream, ': ping\n\n')
      if (open.size === 0) {
        clearInterval(timer)
        timer = undefined
      }
    }, heartbeatMs)
    timer.unref?.()
  }

  return {
    open(options) {
      let controller: ReadableStreamDefaultController<Uint8Array> | undefined
      let closed = !accepting
      // while catching up, broadcast events wait here, in order, to follow the catch-up
      let waiting: string[] | undefined = options.catchUp ? [] : undefined
      let waitingBytes = 0
      const enqueue = (text: string) => {
        const c = controller as ReadableStreamDefaultController<Uint8Array>
        c.enqueue(encoder.encode(text))
        if ((c.desiredSize ?? 0) < HIGH_WATER_BYTES - MAX_BACKLOG_BYTES) stream.close()
      }
      const stream = {
        kind: options.kind,
        principal: options.principal,
        stillValid: options.stillValid,
        get closed() {
          return closed
        },
        send(text: string) {
          if (closed || !controller) return false
          try {
            if (waiting) {
              waiting.push(text)
              waitingBytes += text.length
              if (waitingBytes > MAX_BACKLOG_BYTES) stream.close()
            } else enqueue(text)
            return !closed
          } catch {
            stream.close()
            return false
          }
        },
        close() {
          if (closed) return
          closed = true
          waiting = undefined
          open.delete(stream)
          try {
            controller?.close()
          } catch {
            // the client already went away
          }
          options.onClose?.(stream)
        },
      }
      const body = new ReadableStream<Uint8Array>(
        {
          start(c) {
            controller = c
            if (closed) {
              c.close()
              return
            }
            open.add(stream)
            ensureTimer()
            // a comment first, so clients and proxies see the stream open at once
            c.enqueue(encoder.encode(': connected\nretry: 2000\n\n'))
          },
          async pull() {
            // one non-empty piece per pull: the stream asks again while the client keeps reading
            while (waiting && !closed && options.catchUp) {
              let piece: string | undefined
              try {
                piece = await options.catchUp()
              } catch {
                stream.close() // the log could not be read: the client reconnects and tries again
                return
              }
              if (closed || !waiting) return
              if (piece === undefined) {
                const held = waiting.join('')
                waiting = undefined
                if (held !== '') enqueue(held)
                return
              }
              if (piece !== '') return enqueue(piece)
            }
          },
          cancel() {
            stream.close()
          },
        },
        { highWaterMark: HIGH_WATER_BYTES, size: (chunk) => chunk?.byteLength ?? 0 },
      )
      return new Response(body, { status: 200, headers: { ...SSE_HEADERS, 'x-request-id': options.requestId } })
    },

    broadcast(text) {
      for (const stream of [...open]) {
        const message = text(stream)
        if (message !== undefined) deliver(stream, message)
      }
    },

    closeAll() {
      accepting = false
      for (const stream of [...open]) stream.close()
      if (timer) clearInterval(timer)
      timer = undefined
    },

    get size() {
      return open.size
    },
  }
}
