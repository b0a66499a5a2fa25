/**
 * The OpenAPI document's request schemas against the validator that decides: every flag body the
 * validator accepts, the documented schema accepts too, so a client generated from the document
 * never refuses what the service takes, and the document never promises less than it checks.
 */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import Ajv from 'ajv'
import fc from 'fast-check'
import { COMMON_FIELDS, CONSTRAINT_FIELDS, FLAG_TYPES, type FlagDefinition, TARGETING_FIELDS } from '../../src/domain/flag.ts'
import { validateDefinition } from '../../src/domain/flag-definition.ts'
import { nameProblem } from '../../src/domain/flag-name.ts'
import { mergeUpdate, READ_ONLY_FIELDS } from '../../src/domain/flag-update.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

type Json = Record<string, any>
let t: TestApp
let doc: Json

beforeAll(async () => {
  t = await createTestApp()
  doc = (await t.req('GET', '/api/openapi.json')).body
})
afterAll(async () => {
  await t?.close()
})

/** The schema at `#/components/schemas/<name>`, its references resolved and 3.0's `nullable` written for ajv. */
function component(name: string): Json {
  const resolve = (node: any): any => {
    if (Array.isArray(node)) return node.map(resolve)
    if (!node || typeof node !== 'object') return node
    if (typeof node.$ref === 'string') return resolve(doc.components.schemas[node.$ref.split('/').at(-1)])
    const out: Json = {}
    for (const [k, v] of Object.entries(node)) if (k !== 'discriminator' && k !== 'example') out[k] = resolve(v)
    if (out.nullable === true) {
      delete out.nullable
      return { anyOf: [out, { type: 'null' }] }
    }
    return out
  }
  return resolve(doc.components.schemas[name])
}

const ajv = new Ajv({ strict: false, allErrors: true })

/** Every field a flag body may have (the validator's own lists), and one it may not. */
const FIELDS = [...COMMON_FIELDS.filter((f) => f !== 'type'), ...CONSTRAINT_FIELDS, ...TARGETING_FIELDS, 'surprise']

/** Values of every JSON kind, near the limits the document states. */
const anyValue = fc.oneof(
  fc.constantFrom(true, false, null, 0, 1, -1, 3, 50, 100, 101, 1.5, 2 ** 53, '', 'A', 'B', 'a', 'x'.repeat(1001), 'x'.repeat(4097)),
  fc.constantFrom(['a'], ['a', 'b'], [], ['a', 'a'], [''], ['x'.repeat(1001)], [1], { type: 'object' }, {}, { on: true }, { a: 'a' }),
  fc.integer({ min: -3, max: 5 }),
  fc.string({ maxLength: 4 }),
  fc.array(fc.constantFrom('a', 'b', 'c'), { maxLength: 3 }),
)

const bodies = fc
  .tuple(fc.constantFrom(...FLAG_TYPES), fc.dictionary(fc.constantFrom(...FIELDS), anyValue, { maxKeys: 5 }))
  .map(([type, fields]) => ({ name: 'gen/flag', type, ...fields }))

test('every flag the validator accepts on create, the documented NewFlag schema accepts', () => {
  const schema = ajv.compile(component('NewFlag'))
  let accepted = 0
  fc.assert(
    fc.property(bodies, (body) => {
      const { name: _name, ...definition } = body
      if (!validateDefinition(definition).ok) return
      accepted++
      if (!schema(body))
        throw new Error(`accepted by the validator, refused by the document: ${JSON.stringify(body)}: ${ajv.errorsText(schema.errors)}`)
    }),
    { numRuns: 3000 },
  )
  expect(accepted).toBeGreaterThan(100) // the generator reaches valid bodies of every kind
})

/** Bodies with one field at each limit the document states for it, and just past it. */
function atLimits(type: string, properties: Record<string, Json>): { field: string; body: Json; within: boolean }[] {
  const base: Json = { name: 'gen/limit', type, ...(type === 'ENUM' || type === 'TAG' ? { enumValues: ['a'] } : {}) }
  const out: { field: string; body: Json; within: boolean }[] = []
  const plain = (s: Json): Json => (s.anyOf ? s.anyOf[0] : s)
  // a number's stated bounds (not an integer's range, which only says it is a safe integer)
  const bound = (n: unknown): n is number => typeof n === 'number' && Math.abs(n) < Number.MAX_SAFE_INTEGER
  const strings = (n: number) => Array.from({ length: n }, (_, i) => `v${i}`)
  for (const [field, raw] of Object.entries(properties)) {
    const s = plain(raw)
    const cases: [unknown, unknown][] = [] // [at the limit, past it]
    // a name is segments of at most 64 characters, joined by '/'
    const text = (n: number) =>
      field === 'name'
        ? `${'x'.repeat(50)}/`
            .repeat(10)
            .slice(0, n - 1)
            .concat('y')
        : 'x'.repeat(n)
    if (s.type === 'string' && typeof s.maxLength === 'number') cases.push([text(s.maxLength), text(s.maxLength + 1)])
    // a list of strings at its length (a list of objects, as prerequisites, has its own tests)
    if (s.type === 'array' && typeof s.maxItems === 'number' && s.items?.type === 'string')
      cases.push([strings(s.maxItems), strings(s.maxItems + 1)])
    if (s.type === 'array' && typeof s.items?.maxLength === 'number')
      cases.push([['x'.repeat(s.items.maxLength)], ['x'.repeat(s.items.maxLength + 1)]])
    if ((s.type === 'number' || s.type === 'integer') && bound(s.minimum)) cases.push([s.minimum, s.minimum - 1])
    if ((s.type === 'number' || s.type === 'integer') && bound(s.maximum)) cases.push([s.maximum, s.maximum + 1])
    for (const [at, past] of cases) {
      out.push({ field, body: { ...base, [field]: at }, within: true })
      out.push({ field, body: { ...base, [field]: past }, within: false })
    }
  }
  return out
}

test("each limit the document states is the validator's: a field at it is accepted, past it refused", () => {
  let checked = 0
  for (const type of FLAG_TYPES) {
    const name = `New${type === 'AB-TEST' ? 'AbTest' : type.charAt(0) + type.slice(1).toLowerCase()}Flag`
    const schema = component(name)
    const validate = ajv.compile(schema)
    for (const { field, body, within } of atLimits(type, schema.properties)) {
      expect({ field, type, within, documented: validate(body) }).toEqual({ field, type, within, documented: within })
      // the field's own verdict (another field may then disagree with it: minValue against the default)
      const result = validateDefinition(Object.fromEntries(Object.entries(body).filter(([k]) => k !== 'name')))
      const refused = field === 'name' ? nameProblem(body.name) !== undefined : !result.ok && result.problems.some((p) => p.field === field)
      expect({ field, type, within, refused }).toEqual({ field, type, within, refused: !within })
      checked++
    }
  }
  expect(checked).toBeGreaterThan(30)
})

test('every flag change the validator accepts, the documented FlagUpdate schema accepts', () => {
  const schema = ajv.compile(component('FlagUpdate'))
  // a stored flag of each type to change, as the service holds them
  const current = Object.fromEntries(
    FLAG_TYPES.map((type) => {
      const made = validateDefinition({ type, ...(type === 'ENUM' || type === 'TAG' ? { enumValues: ['a', 'b'] } : {}) })
      if (!made.ok) throw new Error(`cannot make a ${type} flag: ${JSON.stringify(made.problems)}`)
      return [type, made.definition]
    }),
  )
  const changes = fc.tuple(
    fc.constantFrom(...FLAG_TYPES),
    fc.dictionary(fc.constantFrom(...FIELDS, 'type', 'name', ...READ_ONLY_FIELDS), anyValue, { maxKeys: 4 }),
  )
  let accepted = 0
  fc.assert(
    fc.property(changes, ([type, patch]) => {
      const { createdAt: _c, updatedAt: _u, revision: _r, name: _n, ...rest } = patch
      const result = validateDefinition(mergeUpdate(current[type] as FlagDefinition, rest), { ignoreFields: ['name'] })
      if (!result.ok || (Object.hasOwn(patch, 'name') && nameProblem(patch.name) !== undefined)) return
      accepted++
      if (!schema(patch))
        throw new Error(`accepted by the validator, refused by the document: ${JSON.stringify(patch)}: ${ajv.errorsText(schema.errors)}`)
    }),
    { numRuns: 3000 },
  )
  expect(accepted).toBeGreaterThan(300)
})
