/**
 * Notices flagd documents too large for a default gRPC client. gRPC implementations refuse a
 * received message over 4 MiB unless the client raises its limit (grpc-js, grpc-go and grpc-java
 * alike), and the flagd providers do not all let their users raise it: a provider sent a larger
 * document fails with RESOURCE_EXHAUSTED and keeps evaluating stale flags. The daemon still sends the
 * document (a client that raised its limit wants it), but says so in its log, once per caller and
 * document size, so the operator learns why a provider stopped following changes.
 */

/** gRPC's default largest received message (bytes). */
export const GRPC_CLIENT_DEFAULT_MAX_BYTES = 4 * 1024 * 1024

/** An upper bound of what a `SyncFlagsResponse` adds to its document. */
const MESSAGE_OVERHEAD = 32

/** `check` before each send: calls `warn` the first time a caller is sent a given oversized document. */
export interface OversizeWatch {
  check(caller: string, document: string): void
}

export function createOversizeWatch(warn: (caller: string, bytes: number) => void, limit = GRPC_CLIENT_DEFAULT_MAX_BYTES): OversizeWatch {
  // UTF-8 takes 1 to 3 bytes per UTF-16 unit: below limit / 3 units no document can be too large
  const surelySmall = Math.floor(limit / 3)
  // the size of the document measured last: streams of one scope share one document, so a change
  // measures it once however many streams it goes to
  let measured = { document: '', bytes: 0 }
  // per caller, the size of the oversized document it was last warned about (not the document:
  // that would keep megabytes alive)
  const warned = new Map<string, string>()
  return {
    check(caller, document) {
      if (document.length <= surelySmall) return
      if (measured.document !== document) measured = { document, bytes: Buffer.byteLength(document) }
      // the message around the document adds a few bytes (field tags, lengths, the empty context)
      if (measured.bytes + MESSAGE_OVERHEAD <= limit) return
      const size = `${document.length}/${measured.bytes}`
      if (warned.get(caller) === size) return
      warned.set(caller, size) // callers are API tokens: few
      warn(caller, measured.bytes)
    },
  }
}
