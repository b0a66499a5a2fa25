/**
 * Checks real responses against the OpenAPI document the app serves: finds the operation for a
 * method and concrete path, picks the response for the status, and validates the body with ajv.
 */

import Ajv from 'ajv'

type Json = Record<string, any>

/** A validator bound to one OpenAPI document. */
export interface Conformance {
  /** Returns the list of problems (empty when the response matches the document). */
  check(method: string, path: string, status: number, body: unknown): string[]
}

function resolveRefs(doc: Json, node: any, seen = 0): any {
  if (seen > 50) return node
  if (Array.isArray(node)) return node.map((n) => resolveRefs(doc, n, seen + 1))
  if (node && typeof node === 'object') {
    if (typeof node.$ref === 'string') {
      const target = node.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((o: Json, k: string) => o?.[k], doc)
      return resolveRefs(doc, target, seen + 1)
    }
    const out: Json = {}
    for (const [k, v] of Object.entries(node)) out[k] = resolveRefs(doc, v, seen + 1)
    return out
  }
  return node
}

/** Converts the 3.0 `nullable` keyword for ajv. */
function nullable(schema: any): any {
  if (Array.isArray(schema)) return schema.map(nullable)
  if (!schema || typeof schema !== 'object') return schema
  const out: Json = {}
  for (const [k, v] of Object.entries(schema)) out[k] = k === 'example' ? v : nullable(v)
  if (out.nullable === true) {
    delete out.nullable
    return { anyOf: [out, { type: 'null' }] }
  }
  return out
}

/** Builds a checker over `doc`. */
export function conformance(doc: Json): Conformance {
  const ajv = new Ajv({ strict: false, allErrors: true })
  ajv.addKeyword('example')
  ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/)
  // one compiled validator per distinct schema: compiling is most of a check's cost, and many
  // operations answer with the same schema (the error envelope)
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>()
  const validator = (schema: unknown) => {
    const key = JSON.stringify(schema)
    let validate = compiled.get(key)
    if (!validate) compiled.set(key, (validate = ajv.compile(schema as Json)))
    return validate
  }
  const templates = Object.keys(doc.paths).map((template) => ({
    template,
    regex: new RegExp(`^${template.replace(/\{(flagName|key)\}/g, '.+').replace(/\{[^}]+\}/g, '[^/]+')}/?$`),
  }))
  return {
    check(method, path, status, body) {
      const pathname = path.split('?')[0] as string
      const match = templates.find((t) => t.regex.test(pathname))
      if (!match) return [`no documented path for ${pathname}`]
      const op = doc.paths[match.template][method.toLowerCase()]
      if (!op) return [`${method} ${match.template} is not documented`]
      const response = resolveRefs(doc, op.responses[String(status)])
      if (!response) return [`${method} ${match.template} does not document status ${status}`]
      const schema = response.content?.['application/json']?.schema
      if (!schema) return []
      const validate = validator(nullable(schema))
      return validate(body) ? [] : (validate.errors ?? []).map((e) => `${method} ${path} ${status}: ${e.instancePath} ${e.message}`)
    },
  }
}

/** Whether `node` is a schema object, as Spectral's `oas3-valid-schema-example` tells one. */
function isSchema(node: Json): boolean {
  return ['enum', 'type', 'format', '$ref', 'properties', 'items'].some((k) => node[k] !== undefined)
}

/**
 * Every `example` and `default` of a schema checked against that schema, and every `example` and
 * `examples.*.value` of a media type, header or parameter against its `schema`: what Spectral's
 * `oas3-valid-schema-example` and `oas3-valid-media-example` check, with one compiled validator per
 * distinct schema where Spectral compiles one per example. Answers the problems, named by path.
 */
export function exampleProblems(doc: Json): string[] {
  const ajv = new Ajv({ strict: false, allErrors: true })
  ajv.addKeyword('example')
  ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/)
  for (const name of ['int32', 'int64']) ajv.addFormat(name, true) // OpenAPI's number formats: Spectral ignores them too
  const compiled = new Map<string, ReturnType<typeof ajv.compile>>()
  const problems: string[] = []
  const check = (schema: unknown, value: unknown, where: string) => {
    const resolved = nullable(resolveRefs(doc, schema))
    const key = JSON.stringify(resolved)
    let validate = compiled.get(key)
    if (!validate) compiled.set(key, (validate = ajv.compile(resolved)))
    if (!validate(value)) problems.push(...(validate.errors ?? []).map((e) => `${where}: ${e.instancePath} ${e.message}`))
  }
  const walk = (node: unknown, path: string[]) => {
    if (Array.isArray(node)) {
      for (const [i, n] of node.entries()) walk(n, [...path, String(i)])
      return
    }
    if (!node || typeof node !== 'object') return
    const obj = node as Json
    const where = path.join('.')
    const parent = path.at(-1)
    const names = parent === 'properties' // a map of property names: its keys are names, not keywords
    if (!names && obj.schema && typeof obj.schema === 'object' && path.some((p) => ['content', 'headers', 'parameters'].includes(p))) {
      if (obj.example !== undefined) check(obj.schema, obj.example, `${where}.example`)
      for (const [name, ex] of Object.entries((obj.examples ?? {}) as Json)) {
        if (ex && typeof ex === 'object' && 'value' in ex) check(obj.schema, ex.value, `${where}.examples.${name}`)
      }
    }
    if (!names && isSchema(obj)) {
      const { example, default: fallback, ...schema } = obj
      if (example !== undefined) check(schema, example, `${where}.example`)
      if (fallback !== undefined) check(schema, fallback, `${where}.default`)
    }
    for (const [k, v] of Object.entries(obj)) if (names || !['example', 'examples', 'default'].includes(k)) walk(v, [...path, k])
  }
  walk(doc, [])
  return problems
}
