/**
 * OpenAPI 3.0 schemas of flags, one per type, combined with `oneOf` and `type` as discriminator.
 * The domain validator (`flag-definition.ts`) decides at run time, so the API, the importer and the
 * offline `validate` command give the same answers; these schemas are built from its own tables and
 * limits (`TYPE_CONSTRAINTS`, `DESCRIPTION_MAX`, `STRING_VALUE_MAX`, `ENUM_VALUES_MAX`,
 * `PATTERN_MAX`…), and test/http/request-schemas.test.ts holds them to it: every body it accepts
 * the schema accepts, and each stated limit is the validator's (at it accepted, past it refused).
 */

import { CONSTRAINT_FIELDS, FLAG_TYPES, type FlagType, TYPE_CONSTRAINTS } from '../../domain/flag.ts'
import { DESCRIPTION_MAX, ENUM_VALUE_LENGTH_MAX, ENUM_VALUES_MAX, STRING_VALUE_MAX } from '../../domain/flag-definition.ts'
import { FLAG_KINDS, OWNER_MAX, TAG_MAX, TAGS_MAX } from '../../domain/flag-lifecycle.ts'
import { PREREQUISITES_MAX } from '../../domain/prerequisite.ts'
import { PATTERN_MAX } from '../../domain/regex-pattern.ts'

type Json = Record<string, unknown>

/** The schema of each constraint field, shared by the flag, update and export-file schemas. */
export const CONSTRAINT_SCHEMAS: Record<(typeof CONSTRAINT_FIELDS)[number], Json> = {
  minValue: { type: 'integer' },
  maxValue: { type: 'integer' },
  maxLength: { type: 'integer', minimum: 1 },
  regexPattern: {
    type: 'string',
    maxLength: PATTERN_MAX,
    description: 'RE2 syntax; the value must contain a match (write ^...$ for a whole match)',
  },
  enumValues: {
    type: 'array',
    items: { type: 'string', minLength: 1, maxLength: ENUM_VALUE_LENGTH_MAX },
    minItems: 1,
    maxItems: ENUM_VALUES_MAX,
    uniqueItems: true,
  },
  minCount: { type: 'integer', minimum: 0 },
  maxCount: { type: 'integer', minimum: 0 },
  chancePercentB: { type: 'number', minimum: 0, maximum: 100, description: 'Chance of variant B in percent; 50 when not given' },
  jsonSchema: {
    type: 'object',
    additionalProperties: true,
    description: 'OBJECT: a JSON Schema (draft 2020-12) that the default, the value and every variant must satisfy',
  },
}

const METADATA_VALUE = { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] }

/** The targeting fields of docs/targeting.md#rules, for a type whose values have schema `value`. */
export function targetingSchemas(value: Json): Record<string, Json> {
  return {
    enabled: {
      type: 'boolean',
      description:
        'false: evaluations answer DISABLED (no value, so every SDK serves its own default); the definition is kept. Default true',
    },
    variants: {
      type: 'object',
      additionalProperties: value,
      maxProperties: 100,
      description:
        'Variant name (1-64 of A-Z a-z 0-9 . _ -) → value. Built in without being listed: BOOLEAN "true"/"false", AB-TEST "A"/"B", ENUM one per enum value',
    },
    targeting: {
      type: 'object',
      additionalProperties: true,
      description:
        "A rule of OpenFeature flagd's JsonLogic dialect (fractional, sem_ver, starts_with, ends_with, $ref to segments) that returns a variant name; at most 64 KiB, 24 levels",
    },
    metadata: {
      type: 'object',
      additionalProperties: METADATA_VALUE,
      maxProperties: 50,
      description: 'Strings, numbers or booleans (at most 4 KiB), carried in OFREP metadata beside type and revision',
    },
    rollout: ROLLOUT,
  }
}

/** An OpenTelemetry instrument name, as a guard's checks name metrics. */
const METRIC_NAME = { type: 'string', minLength: 1, maxLength: 255, pattern: '^[A-Za-z][A-Za-z0-9_./-]*$' }

/** A rollout's guard (docs/guarded-rollouts.md#a-guard). */
const ROLLOUT_GUARD = {
  type: 'object',
  additionalProperties: false,
  required: ['checks'],
  description: "Checks on the application's own metrics (sent over OTLP) that stop the rollout by themselves when its variant does worse",
  properties: {
    checks: {
      type: 'array',
      minItems: 1,
      maxItems: 5,
      items: {
        oneOf: [
          {
            type: 'object',
            additionalProperties: false,
            required: ['kind', 'errors', 'total'],
            description: "errors/total of the rollout's variant against the other variants",
            properties: {
              kind: { type: 'string', enum: ['error-rate'] },
              errors: METRIC_NAME,
              total: METRIC_NAME,
              maxIncrease: { type: 'number', minimum: 0, maximum: 1, description: 'Tolerated increase of the rate (default 0)' },
            },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['kind', 'histogram'],
            description: "The mean of a histogram of the rollout's variant against the other variants",
            properties: {
              kind: { type: 'string', enum: ['mean'] },
              histogram: METRIC_NAME,
              maxIncrease: { type: 'number', minimum: 0, description: "Tolerated increase of the mean, in the metric's unit (default 0)" },
            },
          },
          {
            type: 'object',
            additionalProperties: false,
            required: ['kind', 'metric', 'max', 'windowSeconds'],
            description: "The increase of a counter with the rollout's variant over a sliding window, against a limit",
            properties: {
              kind: { type: 'string', enum: ['threshold'] },
              metric: METRIC_NAME,
              max: { type: 'number', minimum: 0 },
              windowSeconds: { type: 'integer', minimum: 10, maximum: 86400 },
            },
          },
        ],
      },
    },
    minSamples: {
      type: 'integer',
      minimum: 10,
      maximum: 1000000,
      description: 'Each arm needs this many before a comparison decides (default 200)',
    },
    alpha: {
      type: 'number',
      minimum: 0.001,
      maximum: 0.2,
      description: 'The chance of a false trip over the whole rollout (default 0.05)',
    },
    action: { type: 'string', enum: ['rollback', 'pause'], description: 'rollback (default): the share drops to 0; pause: it stays' },
  },
  example: { checks: [{ kind: 'error-rate', errors: 'app.errors', total: 'app.requests', maxIncrease: 0.01 }], action: 'rollback' },
}

/** A progressive rollout (docs/change-control.md#progressive-rollouts). */
const ROLLOUT = {
  type: 'object',
  additionalProperties: false,
  required: ['variant', 'start', 'end', 'fromPercent', 'toPercent'],
  description:
    'Serves variant to a share of contexts rising linearly from fromPercent at start to toPercent at end (at most 100 steps), sticky per targetingKey (or the attribute by); the rest get the answer without it. Per environment',
  properties: {
    variant: { type: 'string', description: 'One of the flag’s variants' },
    start: { type: 'string', format: 'date-time' },
    end: { type: 'string', format: 'date-time', description: 'After start' },
    fromPercent: { type: 'number', minimum: 0, maximum: 100 },
    toPercent: { type: 'number', minimum: 0, maximum: 100, description: 'At least fromPercent' },
    by: { type: 'string', description: 'The context attribute that keeps a context in its bucket (default targetingKey)' },
    guard: ROLLOUT_GUARD,
    status: {
      type: 'string',
      enum: ['pending', 'running', 'completed', 'paused', 'rolled-back'],
      readOnly: true,
      description: 'Where the rollout stands at the read (ignored when sent): paused or rolled-back once its guard tripped',
    },
    percent: {
      type: 'number',
      minimum: 0,
      maximum: 100,
      readOnly: true,
      description: 'The share served at the read (ignored when sent): 0 once rolled back, the share of the trip once paused',
    },
  },
  example: { variant: 'on', start: '2026-12-01T09:00:00Z', end: '2026-12-08T09:00:00Z', fromPercent: 5, toPercent: 100 },
}

/** The constraint fields of a type, as the validator's table lists them (NUMBER's bounds are decimals). */
const constraintsOf = (type: FlagType): Record<string, Json> =>
  Object.fromEntries(
    TYPE_CONSTRAINTS[type].map((k) => [
      k,
      type === 'NUMBER' && (k === 'minValue' || k === 'maxValue') ? { type: 'number' } : CONSTRAINT_SCHEMAS[k],
    ]),
  )

const TS = { type: 'string', format: 'date-time', example: '2026-11-22T10:15:00.123Z' }

interface TypeDoc {
  type: FlagType
  value: Json
  required?: string[]
  example: Json
}

const TYPES: TypeDoc[] = [
  {
    type: 'BOOLEAN',
    value: { type: 'boolean' },
    example: {
      name: 'checkout/new_flow',
      type: 'BOOLEAN',
      description: 'New checkout flow',
      defaultValue: false,
      valueExists: true,
      value: true,
    },
  },
  {
    type: 'INTEGER',
    value: { type: 'integer' },
    example: {
      name: 'app/max_retries',
      type: 'INTEGER',
      description: 'Retry budget',
      defaultValue: 3,
      valueExists: true,
      value: 5,
      minValue: 1,
      maxValue: 10,
    },
  },
  {
    type: 'STRING',
    value: { type: 'string', maxLength: STRING_VALUE_MAX },
    example: {
      name: 'ui/banner_text',
      type: 'STRING',
      description: 'Banner',
      defaultValue: 'hello',
      valueExists: false,
      maxLength: 40,
      regexPattern: '^[a-z ]+$',
    },
  },
  {
    type: 'ENUM',
    value: { type: 'string' },
    required: ['enumValues'],
    example: {
      name: 'ui/theme',
      type: 'ENUM',
      description: 'Theme',
      defaultValue: 'auto',
      valueExists: true,
      value: 'dark',
      enumValues: ['light', 'dark', 'auto'],
    },
  },
  {
    type: 'TAG',
    value: { type: 'array', items: { type: 'string' }, uniqueItems: true },
    required: ['enumValues'],
    example: {
      name: 'ui/modules',
      type: 'TAG',
      description: 'Enabled modules',
      defaultValue: ['core'],
      valueExists: true,
      value: ['core', 'ai'],
      enumValues: ['core', 'chat', 'ai'],
      minCount: 1,
    },
  },
  {
    type: 'AB-TEST',
    value: { type: 'string', enum: ['A', 'B'] },
    example: {
      name: 'experiments/pricing_page',
      type: 'AB-TEST',
      description: 'Pricing A/B',
      defaultValue: 'A',
      valueExists: false,
      chancePercentB: 25.5,
    },
  },
  {
    type: 'NUMBER',
    value: { type: 'number' },
    example: {
      name: 'pricing/discount_rate',
      type: 'NUMBER',
      description: 'Discount',
      defaultValue: 0,
      valueExists: true,
      value: 0.15,
      maxValue: 0.5,
    },
  },
  {
    type: 'OBJECT',
    value: { type: 'object', additionalProperties: true },
    example: {
      name: 'ui/gallery',
      type: 'OBJECT',
      description: 'Gallery layout',
      defaultValue: {},
      valueExists: true,
      value: { columns: 3, title: 'New arrivals' },
      jsonSchema: { type: 'object', required: ['columns', 'title'] },
    },
  },
]

/** kind, owner and tags (docs/api.md#lifecycle): shared by every environment. */
const LIFECYCLE_SCHEMAS: Record<string, Json> = {
  kind: { type: 'string', enum: [...FLAG_KINDS], description: 'What the flag is for; release when not set' },
  owner: { type: 'string', minLength: 1, maxLength: OWNER_MAX, description: 'Who answers for the flag' },
  tags: {
    type: 'array',
    maxItems: TAGS_MAX,
    uniqueItems: true,
    items: { type: 'string', pattern: '^[A-Za-z0-9._\\-:/]{1,64}$', minLength: 1, maxLength: TAG_MAX },
    description: 'Labels to find flags by (GET /api/flags?tag=)',
  },
  prerequisites: {
    type: 'array',
    maxItems: PREREQUISITES_MAX,
    description:
      'Flags this one requires, evaluated in the same environment: while one of them is disabled or answers a value none of the named variants has, this flag gives its default answer (reason DEFAULT). Shared by every environment; chains up to 5 links, no cycles.',
    items: {
      type: 'object',
      additionalProperties: false,
      required: ['flag', 'variants'],
      properties: {
        flag: { type: 'string', description: 'The required flag', example: 'checkout/new_api' },
        variants: {
          type: 'array',
          minItems: 1,
          items: { type: 'string' },
          description:
            "Variants of the required flag whose value satisfies the requirement (built-in ones count: 'true' for a BOOLEAN that is on)",
          example: ['true'],
        },
      },
    },
  },
}

const componentName = (type: string, prefix = '') =>
  `${prefix}${type === 'AB-TEST' ? 'AbTest' : type.charAt(0) + type.slice(1).toLowerCase()}Flag`

function resource(d: TypeDoc): Json {
  return {
    type: 'object',
    additionalProperties: false,
    required: [
      'name',
      'type',
      'description',
      'defaultValue',
      'valueExists',
      'enabled',
      'kind',
      'tags',
      'createdAt',
      'updatedAt',
      'revision',
      'archived',
      'potentiallyStale',
      ...(d.type === 'AB-TEST' ? ['chancePercentB'] : []),
      ...(d.required ?? []),
    ],
    properties: {
      name: { type: 'string', description: 'Segments joined by "/"' },
      type: { type: 'string', enum: [d.type] },
      description: { type: 'string' },
      defaultValue: nullable({ ...d.value, description: "null: no default, the application's own applies" }),
      valueExists: { type: 'boolean' },
      value: { ...d.value, description: 'Present exactly when valueExists is true' },
      ...constraintsOf(d.type),
      ...targetingSchemas(d.value),
      ...LIFECYCLE_SCHEMAS,
      createdAt: TS,
      updatedAt: TS,
      revision: { type: 'integer', minimum: 1, description: 'Grows by one on every change; the ETag' },
      archived: {
        type: 'boolean',
        description: 'Read-only: archived flags are unknown to every evaluation path (POST …/restore brings one back)',
      },
      potentiallyStale: {
        type: 'boolean',
        description: "Read-only: the flag has outlived its kind's expected lifetime (lifecycle.<kind>Days) since createdAt",
      },
    },
    example: {
      ...d.example,
      enabled: true,
      kind: 'release',
      tags: [],
      createdAt: TS.example,
      updatedAt: TS.example,
      revision: 1,
      archived: false,
      potentiallyStale: false,
    },
  }
}

function creation(d: TypeDoc): Json {
  const optional: Record<string, Json> = {
    // no `default` keyword: client generators would make the field required in requests
    description: { type: 'string', maxLength: DESCRIPTION_MAX, description: 'Free text; empty when not given' },
    defaultValue: {
      ...d.value,
      description: "Defaults to the type's zero value; null means no default (the application's own applies)",
    },
    valueExists: { type: 'boolean', description: 'Implied true when value is given' },
    value: d.value,
    ...constraintsOf(d.type),
    ...targetingSchemas(d.value),
    ...LIFECYCLE_SCHEMAS,
  }
  return {
    type: 'object',
    additionalProperties: false,
    required: ['name', 'type', ...(d.required ?? [])],
    properties: {
      name: {
        type: 'string',
        maxLength: 255,
        description: '1-255 characters: segments of 1-64 of A-Z a-z 0-9 _ - . (starting with a letter or digit) joined by "/"',
      },
      type: { type: 'string', enum: [d.type] },
      // every other field may be null: as if not given (defaultValue: no default), docs/api.md#choices-where-the-specification-is-silent
      ...Object.fromEntries(Object.entries(optional).map(([k, v]) => [k, nullable(v)])),
    },
    example: d.example,
  }
}

const discriminated = (prefix: string) => ({
  oneOf: TYPES.map((d) => ({ $ref: `#/components/schemas/${componentName(d.type, prefix)}` })),
  discriminator: {
    propertyName: 'type',
    mapping: Object.fromEntries(TYPES.map((d) => [d.type, `#/components/schemas/${componentName(d.type, prefix)}`])),
  },
})

const nullable = (s: Json) => ({ ...s, nullable: true })

/** Every flag schema, for `components.schemas`. */
export function flagComponents(): Record<string, Json> {
  const out: Record<string, Json> = {}
  for (const d of TYPES) {
    out[componentName(d.type)] = resource(d)
    out[componentName(d.type, 'New')] = creation(d)
  }
  out.Flag = discriminated('')
  out.NewFlag = discriminated('New')
  out.FlagUpdate = {
    type: 'object',
    additionalProperties: false,
    description:
      'Partial update. createdAt, updatedAt and revision are ignored, so a GET result can be sent back. A constraint, variants, targeting or metadata set to null is removed; ' +
      'defaultValue null means no default. valueExists: false without value clears the value. A new type takes its defaultValue, value and constraints only from the body.',
    properties: {
      name: { type: 'string', description: 'Rename (into any free name)' },
      type: { type: 'string', enum: [...FLAG_TYPES] },
      description: { type: 'string', maxLength: DESCRIPTION_MAX, nullable: true, description: 'null: empty' },
      defaultValue: { description: 'Type depends on the flag type; null: no default' },
      value: { description: 'Type depends on the flag type; null: no value (as valueExists: false)' },
      valueExists: { type: 'boolean', nullable: true, description: 'null: as if not given' },
      ...Object.fromEntries(CONSTRAINT_FIELDS.map((k) => [k, nullable(CONSTRAINT_SCHEMAS[k])])),
      minValue: { type: 'number', nullable: true, description: 'An integer for INTEGER flags' },
      maxValue: { type: 'number', nullable: true, description: 'An integer for INTEGER flags' },
      // null removes each (enabled then reads true, its default)
      ...Object.fromEntries(
        Object.entries(targetingSchemas({ description: 'Type depends on the flag type' })).map(([k, v]) => [k, nullable(v)]),
      ),
      // shared fields: null removes each (kind then reads release)
      ...Object.fromEntries(Object.entries(LIFECYCLE_SCHEMAS).map(([k, v]) => [k, nullable(v)])),
      // read-only fields of a GET result, ignored whatever they hold
      createdAt: { description: 'Ignored (any value)' },
      updatedAt: { description: 'Ignored (any value)' },
      revision: { description: 'Ignored (any value); use If-Match' },
      archived: { description: 'Ignored (any value); use POST …/archive and …/restore' },
      potentiallyStale: { description: 'Ignored (any value)' },
      dependents: { description: 'Ignored (any value); GET …/dependents lists them' },
    },
    example: { value: 7, maxValue: 20 },
  }
  out.ExplainRequest = {
    type: 'object',
    additionalProperties: false,
    properties: {
      context: { type: 'object', additionalProperties: true, description: 'The evaluation context, as an application sends it over OFREP' },
    },
    example: { context: { targetingKey: 'user-42', email: 'ann@example.com', appVersion: '2.3.0' } },
  }
  out.ExplainedEvaluation = {
    type: 'object',
    required: ['key', 'trace'],
    properties: {
      key: { type: 'string' },
      value: { description: "Absent when the application's own default applies (DISABLED, no default, or an error)" },
      reason: { type: 'string', enum: ['STATIC', 'DEFAULT', 'SPLIT', 'TARGETING_MATCH', 'DISABLED'] },
      variant: { type: 'string' },
      metadata: { type: 'object', additionalProperties: METADATA_VALUE },
      errorCode: { type: 'string', enum: ['GENERAL'], description: 'Present when the rule could not decide' },
      errorDetails: { type: 'string' },
      trace: {
        type: 'array',
        description: 'The steps that decided the answer, in order; the last one (kind result) says why the value was served',
        items: {
          type: 'object',
          required: ['kind', 'text'],
          properties: {
            kind: { type: 'string', enum: ['condition', 'segment', 'fractional', 'fractional-skipped', 'result'] },
            text: { type: 'string', description: 'The step in words' },
            path: { type: 'string', description: 'Where in the rule (targeting.if[0])' },
            rule: { description: 'The condition tested', type: 'object', additionalProperties: true },
            result: { type: 'boolean' },
            name: { type: 'string', description: 'The segment' },
            matched: { type: 'boolean' },
            bucketKey: { type: 'string' },
            bucket: { type: 'integer', minimum: 0, maximum: 2147483647, format: 'int32' },
            total: { type: 'integer', minimum: 0, maximum: 2147483647, format: 'int32' },
            variant: { description: "The bucket's variant" },
            reason: { type: 'string' },
          },
        },
      },
    },
    example: {
      key: 'checkout/new_flow',
      value: true,
      reason: 'TARGETING_MATCH',
      variant: 'true',
      metadata: { type: 'BOOLEAN', revision: 3 },
      trace: [
        {
          kind: 'condition',
          path: 'targeting.if[0]',
          rule: { '==': [{ var: 'plan' }, 'pro'] },
          result: false,
          text: 'targeting.if[0]: plan is "pro": no',
        },
        { kind: 'segment', name: 'staff', matched: true, text: 'segment staff matched' },
        { kind: 'result', text: 'the rule chose variant true: true' },
      ],
    },
  }
  out.FlagDeleted = {
    type: 'object',
    required: ['deleted', 'name'],
    properties: { deleted: { type: 'boolean', enum: [true] }, name: { type: 'string' } },
  }
  return out
}

/** A `$ref` to a component schema. */
export const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

/** Segment schemas (docs/targeting.md#rules), for `components.schemas`. */
export function segmentComponents(): Record<string, Json> {
  const rule = {
    type: 'object',
    additionalProperties: true,
    description: 'A condition in OpenFeature flagd\'s JsonLogic dialect; may refer to other segments ({"$ref": name}), never in a cycle',
  }
  return {
    Segment: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'description', 'rule', 'usedBy', 'createdAt', 'updatedAt', 'revision'],
      properties: {
        name: { type: 'string', description: '1-64 of A-Z a-z 0-9 . _ -' },
        description: { type: 'string' },
        rule,
        usedBy: { type: 'array', items: { type: 'string' }, description: 'The flags, then the segments, whose rules refer to it' },
        createdAt: TS,
        updatedAt: TS,
        revision: { type: 'integer', minimum: 1 },
      },
      example: {
        name: 'beta-testers',
        description: 'Staff and opted-in customers',
        rule: { or: [{ ends_with: [{ var: 'email' }, '@example.com'] }, { in: [{ var: 'plan' }, ['beta']] }] },
        usedBy: ['checkout/new_flow'],
        createdAt: TS.example,
        updatedAt: TS.example,
        revision: 1,
      },
    },
    SegmentInput: {
      type: 'object',
      additionalProperties: false,
      required: ['rule'],
      properties: { description: { type: 'string', maxLength: 4096 }, rule },
      example: { description: 'Staff', rule: { ends_with: [{ var: 'email' }, '@example.com'] } },
    },
    SegmentDeleted: {
      type: 'object',
      required: ['deleted', 'name'],
      properties: { deleted: { type: 'boolean', enum: [true] }, name: { type: 'string' } },
    },
  }
}
