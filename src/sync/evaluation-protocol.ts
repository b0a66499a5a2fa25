/**
 * flagd's evaluation service (`flagd.evaluation.v1.Service` and `v2`, the `evaluation.proto` files of
 * open-feature/flagd-schemas, copied unchanged beside this file and embedded in the binary): its
 * messages through protobufjs, per method for the server and as `@grpc/grpc-js` client definitions. v2 is what
 * OpenFeature's JavaScript flagd provider 0.16 calls, v1 what older providers call; v1 adds
 * `ResolveAll`.
 */

import type { ServiceDefinition } from '@grpc/grpc-js'
import protobuf from 'protobufjs'
import { jsonCodec } from './proto-json.ts'

export { fromStruct, toStruct } from './proto-json.ts'

import v1Text from './evaluation-v1.proto' with { type: 'text' }
import v2Text from './evaluation-v2.proto' with { type: 'text' }

const root = new protobuf.Root()
root.addJSON(
  (protobuf.common as unknown as Record<string, { nested: protobuf.INamespace['nested'] }>)['google/protobuf/struct.proto']?.nested ?? {},
)
protobuf.parse(v1Text, root, { keepCase: false })
protobuf.parse(v2Text, root, { keepCase: false })
root.resolveAll()

/** The methods of the service, and what each resolves. */
export const RESOLVERS = ['ResolveBoolean', 'ResolveString', 'ResolveFloat', 'ResolveInt', 'ResolveObject'] as const
export type Resolver = (typeof RESOLVERS)[number]

/** One method of one version: its name, path and messages' codecs. */
export interface EvaluationMethod {
  name: string
  path: string
  responseStream: boolean
  decodeRequest(bytes: Uint8Array): object
  encodeRequest(request: object): Uint8Array
  encodeResponse(response: object): Uint8Array
  decodeResponse(bytes: Uint8Array): object
  /** The same messages in protobuf's JSON mapping (the Connect protocol's JSON codec). */
  decodeRequestJson(json: unknown): object
  encodeResponseJson(response: object): unknown
}

/** The methods of one version, as the server and clients encode them. */
export function evaluationMethods(version: 'v1' | 'v2'): EvaluationMethod[] {
  made[version] ??= methodsOf(version)
  return made[version]
}
// each version's methods, made once (their codecs are the same for every listener and client)
const made: Partial<Record<'v1' | 'v2', EvaluationMethod[]>> = {}

function methodsOf(version: 'v1' | 'v2'): EvaluationMethod[] {
  const pkg = `flagd.evaluation.${version}`
  return root.lookupService(`${pkg}.Service`).methodsArray.map((method) => {
    const request = root.lookupType(method.resolvedRequestType?.fullName ?? `${pkg}.${method.requestType}`)
    const response = root.lookupType(method.resolvedResponseType?.fullName ?? `${pkg}.${method.responseType}`)
    const requestJson = jsonCodec(request)
    const responseJson = jsonCodec(response)
    return {
      name: method.name,
      path: `/${pkg}.Service/${method.name}`,
      responseStream: method.responseStream === true,
      decodeRequest: (b) => request.toObject(request.decode(b), { defaults: false, longs: Number }),
      encodeRequest: (r) => request.encode(request.fromObject(r)).finish(),
      encodeResponse: (r) => response.encode(response.fromObject(r)).finish(),
      decodeResponse: (b) => response.toObject(response.decode(b), { longs: Number, defaults: true }),
      decodeRequestJson: (json) => request.toObject(requestJson.fromJson(json), { defaults: false, longs: Number }),
      encodeResponseJson: (r) => responseJson.toJson(response.fromObject(r)),
    }
  })
}

/** The `@grpc/grpc-js` client definition of one version (tests and the bench call the service with it). */
export function evaluationService(version: 'v1' | 'v2'): ServiceDefinition {
  const definition: Record<string, ServiceDefinition[string]> = {}
  for (const m of evaluationMethods(version))
    definition[m.name] = {
      path: m.path,
      requestStream: false,
      responseStream: m.responseStream,
      requestDeserialize: (b: Buffer) => m.decodeRequest(b),
      requestSerialize: (r: object) => Buffer.from(m.encodeRequest(r)),
      responseSerialize: (r: object) => Buffer.from(m.encodeResponse(r)),
      responseDeserialize: (b: Buffer) => m.decodeResponse(b),
    }
  return definition as ServiceDefinition
}

/** One method of one version by name (`ResolveInt`, `EventStream`…); throws naming it when there is none. */
export function evaluationMethod(version: 'v1' | 'v2', name: string): EvaluationMethod {
  const method = evaluationMethods(version).find((m) => m.name === name)
  if (method === undefined) throw new Error(`flagd.evaluation.${version}.Service has no method ${name}`)
  return method
}
