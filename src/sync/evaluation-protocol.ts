/**
 * flagd's evaluation service (`flagd.evaluation.v1.Service` and `v2`, the `evaluation.proto` files of
 * open-feature/flagd-schemas, copied unchanged beside this file and embedded in the binary): its
 * messages through protobufjs, and the gRPC service definitions `@grpc/grpc-js` serves. v2 is what
 * OpenFeature's JavaScript flagd provider 0.16 calls, v1 what older providers call; v1 adds
 * `ResolveAll`.
 */

import type { ServiceDefinition } from '@grpc/grpc-js'
import protobuf from 'protobufjs'
import v1Text from './evaluation-v1.proto' with { type: 'text' }
import v2Text from './evaluation-v2.proto' with { type: 'text' }

const root = new protobuf.Root()
root.addJSON(
  (protobuf.common as unknown as Record<string, { nested: protobuf.INamespace['nested'] }>)['google/protobuf/struct.proto']?.nested ?? {},
)
protobuf.parse(v1Text, root, { keepCase: false })
protobuf.parse(v2Text, root, { keepCase: false })
root.resolveAll()

/** A JSON value as a `google.protobuf.Value`. */
function toValue(v: unknown): Record<string, unknown> {
  if (v === null || v === undefined) return { nullValue: 0 }
  if (typeof v === 'boolean') return { boolValue: v }
  if (typeof v === 'number') return { numberValue: v }
  if (typeof v === 'string') return { stringValue: v }
  if (Array.isArray(v)) return { listValue: { values: v.map(toValue) } }
  return { structValue: toStruct(v as Record<string, unknown>) }
}

/** A JSON object as a `google.protobuf.Struct`. */
export function toStruct(o: Record<string, unknown>): { fields: Record<string, unknown> } {
  return { fields: Object.fromEntries(Object.entries(o).map(([k, v]) => [k, toValue(v)])) }
}

/** A decoded `google.protobuf.Value` as JSON. */
function fromValue(v: Record<string, unknown> | undefined): unknown {
  if (!v) return null
  if (v.boolValue !== undefined) return v.boolValue
  if (v.numberValue !== undefined) return v.numberValue
  if (v.stringValue !== undefined) return v.stringValue
  if (v.listValue !== undefined) return ((v.listValue as { values?: Record<string, unknown>[] }).values ?? []).map(fromValue)
  if (v.structValue !== undefined) return fromStruct(v.structValue as { fields?: Record<string, Record<string, unknown>> })
  return null
}

/** A decoded `google.protobuf.Struct` as a JSON object. */
export function fromStruct(s: { fields?: Record<string, Record<string, unknown>> } | undefined): Record<string, unknown> {
  return Object.fromEntries(Object.entries(s?.fields ?? {}).map(([k, v]) => [k, fromValue(v)]))
}

/** The methods of the service, and what each resolves. */
export const RESOLVERS = ['ResolveBoolean', 'ResolveString', 'ResolveFloat', 'ResolveInt', 'ResolveObject'] as const
export type Resolver = (typeof RESOLVERS)[number]

/** The gRPC definition of one version: every method, its path, and its messages' codecs. */
export function evaluationService(version: 'v1' | 'v2'): ServiceDefinition {
  const pkg = `flagd.evaluation.${version}`
  const service = root.lookupService(`${pkg}.Service`)
  const definition: Record<string, ServiceDefinition[string]> = {}
  for (const method of service.methodsArray) {
    const request = root.lookupType(method.resolvedRequestType?.fullName ?? `${pkg}.${method.requestType}`)
    const response = root.lookupType(method.resolvedResponseType?.fullName ?? `${pkg}.${method.responseType}`)
    definition[method.name] = {
      path: `/${pkg}.Service/${method.name}`,
      requestStream: false,
      responseStream: method.responseStream === true,
      requestDeserialize: (b: Buffer) => request.toObject(request.decode(b), { defaults: false, longs: Number }),
      requestSerialize: (r: object) => Buffer.from(request.encode(request.fromObject(r)).finish()),
      responseSerialize: (r: object) => Buffer.from(response.encode(response.fromObject(r)).finish()),
      responseDeserialize: (b: Buffer) => response.toObject(response.decode(b), { longs: Number, defaults: true }),
    }
  }
  return definition as ServiceDefinition
}
