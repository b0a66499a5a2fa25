/**
 * Protobuf's JSON mapping (proto3 JSON) for the evaluation service's messages, which the Connect
 * protocol's JSON codec carries (OpenFeature's flagd web provider speaks it): field names in
 * lowerCamelCase (snake_case read too), 64-bit integers as strings, enums by name, and
 * `google.protobuf.Struct` / `Value` / `ListValue` as plain JSON. protobufjs reads and writes the
 * binary form; this maps its objects to and from JSON.
 */

import protobuf from 'protobufjs'

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

const STRUCT = '.google.protobuf.Struct'
const VALUE = '.google.protobuf.Value'
const LIST = '.google.protobuf.ListValue'

/** A message of `type` (as protobufjs's toObject gives it) as JSON. */
function toJsonOf(type: protobuf.Type, object: Record<string, unknown>): unknown {
  if (type.fullName === STRUCT) return fromStruct(object as never)
  if (type.fullName === VALUE) return fromValue(object)
  if (type.fullName === LIST) return ((object.values as Record<string, unknown>[] | undefined) ?? []).map(fromValue)
  const out: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(object)) {
    const field = type.fields[key]
    const nested = field?.resolvedType
    if (!(nested instanceof protobuf.Type)) out[key] = value
    else if (field?.map) out[key] = Object.fromEntries(Object.entries(value as object).map(([k, v]) => [k, toJsonOf(nested, v)]))
    else if (field?.repeated) out[key] = (value as Record<string, unknown>[]).map((v) => toJsonOf(nested, v))
    else out[key] = toJsonOf(nested, value as Record<string, unknown>)
  }
  return out
}

const camel = (name: string) => name.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase())

/** JSON of a message of `type` as an object protobufjs's fromObject takes; throws naming what is wrong. */
function fromJsonOf(type: protobuf.Type, json: unknown): Record<string, unknown> {
  if (type.fullName === STRUCT) {
    if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${type.name} must be a JSON object`)
    return toStruct(json as Record<string, unknown>)
  }
  if (type.fullName === VALUE) return toValue(json)
  if (type.fullName === LIST) {
    if (!Array.isArray(json)) throw new Error('a ListValue must be a JSON array')
    return { values: json.map(toValue) }
  }
  if (json === null || typeof json !== 'object' || Array.isArray(json)) throw new Error(`${type.name} must be a JSON object`)
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(json)) {
    const field = type.fields[camel(name)]
    if (field === undefined) throw new Error(`${type.name} has no field "${name}"`)
    if (value === null) continue // null is the field's default
    const nested = field.resolvedType
    if (!(nested instanceof protobuf.Type)) out[field.name] = value
    else if (field.map) {
      if (typeof value !== 'object' || Array.isArray(value)) throw new Error(`${type.name}.${field.name} must be a JSON object`)
      out[field.name] = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fromJsonOf(nested, v)]))
    } else if (field.repeated) {
      if (!Array.isArray(value)) throw new Error(`${type.name}.${field.name} must be a JSON array`)
      out[field.name] = value.map((v) => fromJsonOf(nested, v))
    } else out[field.name] = fromJsonOf(nested, value)
  }
  return out
}

/** The JSON mapping of messages of `type`. */
export function jsonCodec(type: protobuf.Type): { toJson(message: protobuf.Message): unknown; fromJson(json: unknown): protobuf.Message } {
  return {
    toJson: (message) => toJsonOf(type, type.toObject(message, { longs: String, enums: String, json: true, defaults: false })),
    fromJson: (json) => {
      const object = fromJsonOf(type, json)
      const invalid = type.verify(object)
      if (invalid) throw new Error(invalid)
      return type.fromObject(object)
    },
  }
}
