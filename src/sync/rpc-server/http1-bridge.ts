/**
 * A connection that turned out to be HTTP/1.1 on the gRPC port, handed whole to a private Bun.serve
 * on a unix socket (which speaks HTTP/1.1 far better than anything hand-written here): its octets
 * are piped both ways, each side's backpressure kept by a SocketSink, and either side closing
 * closes the other.
 */

import { SocketSink } from './socket-sink.ts'

/** The client's side of a bridge. */
export interface Bridge {
  /** Octets the client sent. */
  send(bytes: Uint8Array): void
  /** The client closed. */
  close(): void
}

/** Bridges the client (its sink, and `first`, what it sent before it was told apart) to `path`. */
export function openBridge(client: SocketSink, first: Uint8Array, path: string): Bridge {
  const waiting: Uint8Array[] = [first.slice()]
  let upstream: SocketSink | undefined
  let closed = false
  Bun.connect<undefined>({
    unix: path,
    socket: {
      open(socket) {
        upstream = new SocketSink(socket as never)
        for (const bytes of waiting.splice(0)) upstream.write(bytes)
        if (closed) upstream.end()
      },
      data: (_socket, bytes) => client.write(bytes),
      drain: () => upstream?.drain(),
      close: () => client.end(),
      error: () => client.end(),
    },
  }).catch(() => client.end())
  return {
    send(bytes) {
      if (upstream) upstream.write(bytes)
      else waiting.push(bytes.slice())
    },
    close() {
      closed = true
      upstream?.end()
    },
  }
}
