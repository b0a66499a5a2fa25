/**
 * What a method of the evaluation service is to its servers (gRPC over HTTP/2 and the Connect
 * protocol): its messages' codecs and its handler, the call's metadata, and the failure shape a
 * handler ends a call with (grpc-js's, so the sync service's refusals read the same).
 */

/** The metadata of a call, as grpc-js's `Metadata.get` answers it (values of one key). */
export interface GrpcMetadata {
  get(key: string): string[]
}

/** A status a handler ends a call with: grpc-js's error shape (`code`, `details`). */
export interface GrpcFailure {
  code: number
  details?: string
  message?: string
}

/** The server's side of a server-streaming call. */
export interface GrpcWriter {
  write(message: object): void
  /** Ends the call with OK. */
  end(): void
  /** Ends the call with a status. */
  fail(failure: GrpcFailure): void
  /** Calls `listener` once when the call is over, ended here or by the client. */
  onClose(listener: () => void): void
}

/** One method: its messages' codecs (binary, and JSON for the Connect protocol's JSON codec) and its handler. */
export type GrpcMethod = {
  decode(bytes: Uint8Array): object
  encode(message: object): Uint8Array
  decodeJson?(json: unknown): object
  encodeJson?(message: object): unknown
} & (
  | { kind: 'unary'; handle(request: object, metadata: GrpcMetadata): object | Promise<object> }
  | { kind: 'stream'; handle(request: object, metadata: GrpcMetadata, call: GrpcWriter): void }
)
