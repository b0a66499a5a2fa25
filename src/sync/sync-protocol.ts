/**
 * flagd's sync protocol (`flagd.sync.v1.FlagSyncService`, `sync.proto` from open-feature/flagd-schemas,
 * copied unchanged beside this file and embedded in the binary at build time): its messages through
 * protobufjs, and the gRPC service definition `@grpc/grpc-js` serves. protobufjs reads the .proto
 * text as it is, so the wire format is the schema's own, not a hand-written imitation of it.
 */

import type { ServiceDefinition } from '@grpc/grpc-js'
import protobuf from 'protobufjs'
import protoText from './sync.proto' with { type: 'text' }

const root = new protobuf.Root()
// the schema imports google/protobuf/struct.proto, which protobufjs carries as one of its common types
root.addJSON(
  (protobuf.common as unknown as Record<string, { nested: protobuf.INamespace['nested'] }>)['google/protobuf/struct.proto']?.nested ?? {},
)
protobuf.parse(protoText, root, { keepCase: false })
root.resolveAll()

const type = (name: string) => root.lookupType(`flagd.sync.v1.${name}`)
const SyncFlagsRequest = type('SyncFlagsRequest')
const SyncFlagsResponse = type('SyncFlagsResponse')
const FetchAllFlagsRequest = type('FetchAllFlagsRequest')
const FetchAllFlagsResponse = type('FetchAllFlagsResponse')
const GetMetadataRequest = type('GetMetadataRequest')
const GetMetadataResponse = type('GetMetadataResponse')

/** What a client asks for in `SyncFlags` and `FetchAllFlags`. */
export interface FlagsRequest {
  providerId: string
  selector: string
}

/** A `SyncFlags` message or the `FetchAllFlags` answer: the flagd document as text. */
export interface FlagsResponse {
  flagConfiguration: string
}

/** Metadata as flagd's `GetMetadata` answers it: a Struct of plain values. */
export interface MetadataResponse {
  metadata: Record<string, string | number | boolean>
}

const decoder = (t: protobuf.Type) => (bytes: Buffer) => {
  const m = t.toObject(t.decode(bytes), { defaults: true }) as { providerId?: string; selector?: string }
  return { providerId: m.providerId ?? '', selector: m.selector ?? '' }
}
/** A Struct value of a plain JSON value. */
const structValue = (v: string | number | boolean) =>
  typeof v === 'string' ? { stringValue: v } : typeof v === 'number' ? { numberValue: v } : { boolValue: v }
// the sync context flagd sends with every document: its static context values, none here
const EMPTY_CONTEXT = { fields: {} }

/** A `SyncFlags` message carrying `text`, encoded. */
export const encodeSyncDocument = (text: string): Buffer =>
  Buffer.from(SyncFlagsResponse.encode(SyncFlagsResponse.fromObject({ flagConfiguration: text, syncContext: EMPTY_CONTEXT })).finish())

/**
 * The service definition `Server.addService` takes; `encodeDocument` encodes a `SyncFlags` message
 * (one change goes to every open stream of a scope as the same document, so the server encodes it
 * once per scope, not once per stream).
 */
export const flagSyncService = (encodeDocument: (text: string) => Buffer): ServiceDefinition => ({
  syncFlags: {
    path: '/flagd.sync.v1.FlagSyncService/SyncFlags',
    requestStream: false,
    responseStream: true,
    requestDeserialize: decoder(SyncFlagsRequest),
    requestSerialize: (r: FlagsRequest) => Buffer.from(SyncFlagsRequest.encode(SyncFlagsRequest.fromObject(r)).finish()),
    responseSerialize: (r: FlagsResponse) => encodeDocument(r.flagConfiguration),
    responseDeserialize: (b: Buffer) => SyncFlagsResponse.toObject(SyncFlagsResponse.decode(b)),
  },
  fetchAllFlags: {
    path: '/flagd.sync.v1.FlagSyncService/FetchAllFlags',
    requestStream: false,
    responseStream: false,
    requestDeserialize: decoder(FetchAllFlagsRequest),
    requestSerialize: (r: FlagsRequest) => Buffer.from(FetchAllFlagsRequest.encode(FetchAllFlagsRequest.fromObject(r)).finish()),
    responseSerialize: (r: FlagsResponse) => Buffer.from(FetchAllFlagsResponse.encode(FetchAllFlagsResponse.fromObject(r)).finish()),
    responseDeserialize: (b: Buffer) => FetchAllFlagsResponse.toObject(FetchAllFlagsResponse.decode(b)),
  },
  getMetadata: {
    path: '/flagd.sync.v1.FlagSyncService/GetMetadata',
    requestStream: false,
    responseStream: false,
    requestDeserialize: (b: Buffer) => GetMetadataRequest.toObject(GetMetadataRequest.decode(b)),
    requestSerialize: () => Buffer.alloc(0),
    responseSerialize: (r: MetadataResponse) =>
      Buffer.from(
        GetMetadataResponse.encode(
          GetMetadataResponse.fromObject({
            metadata: { fields: Object.fromEntries(Object.entries(r.metadata).map(([k, v]) => [k, structValue(v)])) },
          }),
        ).finish(),
      ),
    responseDeserialize: (b: Buffer) => GetMetadataResponse.toObject(GetMetadataResponse.decode(b)),
  },
})

/** The definition encoding each message anew: for clients (tests, the bench), which only decode. */
export const FLAG_SYNC_SERVICE: ServiceDefinition = flagSyncService(encodeSyncDocument)
