/** Request and response models of migrations: the export document, import options and result. */

import { t } from 'elysia'
import { FLAG_TYPES } from '../../domain/flag.ts'
import { ApplyErrorSchema } from './common-schemas.ts'
import { CONSTRAINT_SCHEMAS, targetingSchemas } from './flag-schemas.ts'

/** One flag inside an export file. */
export const ExportedFlagSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['description', 'type', 'defaultValue', 'valueExists', 'enabled'],
  properties: {
    description: { type: 'string' },
    type: { type: 'string', enum: [...FLAG_TYPES] },
    defaultValue: { description: 'Boolean, integer, number, string, array of strings, object, or "A"/"B", by type; null: no default' },
    valueExists: { type: 'boolean' },
    value: { description: 'Present exactly when valueExists is true; same type as defaultValue' },
    ...CONSTRAINT_SCHEMAS,
    minValue: { type: 'number', description: 'An integer for INTEGER flags' },
    maxValue: { type: 'number', description: 'An integer for INTEGER flags' },
    ...targetingSchemas({ description: 'A value of the flag type' }),
  },
}

const EXAMPLE = {
  environment: 'staging',
  version: '1.0.0',
  createdAt: '2026-11-22T10:15:00.123Z',
  flags: {
    'app/max_retries': {
      description: 'Retry budget',
      type: 'INTEGER',
      defaultValue: 3,
      valueExists: true,
      value: 5,
      minValue: 1,
      maxValue: 10,
      enabled: true,
    },
    'ui/theme': {
      description: 'Theme',
      type: 'ENUM',
      defaultValue: 'auto',
      valueExists: false,
      enumValues: ['light', 'dark', 'auto'],
      enabled: true,
      targeting: { if: [{ ends_with: [{ var: 'email' }, '@example.com'] }, 'dark'] },
    },
  },
}

/** The export document (also what PUT /api/migrations takes). */
export const ExportDocumentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['environment', 'version', 'createdAt', 'flags'],
  properties: {
    environment: { type: 'string' },
    version: { type: 'string', description: 'Export format version, MAJOR.MINOR.PATCH; flagd writes 1.0.0 and reads 1.x.x' },
    createdAt: { type: 'string', format: 'date-time' },
    flags: { type: 'object', description: 'Flags keyed by name, in name order', additionalProperties: ExportedFlagSchema },
    segments: {
      type: 'object',
      description: 'Segments keyed by name (only when there are any)',
      additionalProperties: {
        type: 'object',
        additionalProperties: false,
        required: ['rule'],
        properties: { description: { type: 'string' }, rule: { type: 'object', additionalProperties: true } },
      },
    },
  },
  example: EXAMPLE,
}

/**
 * One flag in an import document: only `type` is required (the rest follows the create rules), and
 * FlagFlow 1.7's own field names are accepted, so an export (or a FlagFlow file) can be passed
 * straight back by a generated client.
 */
export const ImportedFlagSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['type'],
  properties: {
    ...ExportedFlagSchema.properties,
    description: { type: 'string', description: 'Empty when not given' },
    defaultValue: { description: "By type; the type's zero value when not given" },
    valueExists: { type: 'boolean', description: 'Implied true when value is given' },
    regExp: { type: 'string', description: "FlagFlow's name for regexPattern (an empty one means none)" },
    tagValues: { type: 'array', items: { type: 'string' }, description: "FlagFlow's name for enumValues" },
    chanceBPercent: { type: 'number', description: "FlagFlow's name for chancePercentB" },
    allowEmpty: { type: 'boolean', description: 'FlagFlow field; dropped (listed in warnings)' },
    isKillSwitch: { type: 'boolean', description: 'FlagFlow field; dropped (listed in warnings)' },
  },
}

/** OpenFeature flagd's flag-definition document (docs/targeting.md#flagd-format); flagd's own schema says the rest. */
export const FlagdDocumentSchema = {
  type: 'object',
  additionalProperties: false,
  required: ['flags'],
  description: "OpenFeature flagd's flag-definition document: https://flagd.dev/schema/v0/flags.json",
  properties: {
    $schema: { type: 'string' },
    flags: {
      type: 'object',
      description: 'Flags keyed by name: {state, variants, defaultVariant, targeting?, metadata?}',
      additionalProperties: { type: 'object', additionalProperties: true },
    },
    $evaluators: {
      type: 'object',
      description: 'Shared rules ($ref)',
      additionalProperties: { type: 'object', additionalProperties: true },
    },
    metadata: { type: 'object', additionalProperties: { oneOf: [{ type: 'string' }, { type: 'number' }, { type: 'boolean' }] } },
  },
}

/** What PUT /api/migrations accepts: an export document, FlagFlow 1.7 field names included. */
export const ImportDocumentSchema = {
  ...ExportDocumentSchema,
  properties: {
    ...ExportDocumentSchema.properties,
    flags: { type: 'object', description: 'Flags keyed by name', additionalProperties: ImportedFlagSchema },
  },
}

export const ImportQuery = t.Object(
  {
    mode: t.Optional(
      t.Union([t.Literal('merge'), t.Literal('replace')], {
        description: 'replace also deletes flags the file does not name (default merge)',
      }),
    ),
    values: t.Optional(
      t.Union([t.Literal('overwrite'), t.Literal('keep')], {
        description: 'keep leaves current values of existing flags (default overwrite)',
      }),
    ),
    // a boolean in the document (generated clients send true/false); the wire carries "true" or "false"
    dryRun: t.Optional(t.BooleanString({ description: 'report what would change, change nothing (default false)' })),
    environment: t.Optional(
      t.String({
        description:
          "The environment whose state the file's per-environment fields set (shared fields change every environment); the default environment when absent",
      }),
    ),
    format: t.Optional(
      t.Union([t.Literal('unleash'), t.Literal('launchdarkly'), t.Literal('flipt'), t.Literal('gofeatureflag')], {
        description:
          "The file is another tool's (docs/migrations.md#from-other-tools): translated into flagd's flags first; what cannot be carried exactly is listed in `skipped`. flipt and gofeatureflag files may also be sent as application/yaml, text/yaml or application/toml",
      }),
    ),
    sourceEnvironment: t.Optional(
      t.String({
        description:
          "With format: the tool's environment (Flipt's namespace) to read where the file holds several; the first in the file when absent (named in warnings)",
      }),
    ),
    diff: t.Optional(
      t.BooleanString({
        description:
          "list each updated field's value before and after in `changes[].diff` (the first 100 updates; only for a caller who may read flags; default false)",
      }),
    ),
  },
  { additionalProperties: false },
)

export const UrlImportBody = t.Object(
  { url: t.String({ description: 'http(s) URL of a migration file', example: 'https://flags.staging.example.com/migration/export' }) },
  { additionalProperties: false },
)

export const ImportResultSchema = t.Object(
  {
    dryRun: t.Boolean(),
    mode: t.Union([t.Literal('merge'), t.Literal('replace')]),
    values: t.Union([t.Literal('overwrite'), t.Literal('keep')]),
    source: t.Object({
      environment: t.String(),
      version: t.String(),
      createdAt: t.String(),
      format: t.Optional(
        t.Union([t.Literal('flagd'), t.Literal('unleash'), t.Literal('launchdarkly'), t.Literal('flipt'), t.Literal('gofeatureflag')], {
          description: "flagd for an OpenFeature flagd document, the tool's name for another tool's file; absent for a migration file",
        }),
      ),
    }),
    summary: t.Object({ created: t.Integer(), updated: t.Integer(), deleted: t.Integer(), unchanged: t.Integer() }),
    changes: t.Array(
      t.Object({
        name: t.String(),
        action: t.Union([t.Literal('create'), t.Literal('update'), t.Literal('delete')]),
        fields: t.Array(t.String(), { description: 'Fields that change' }),
        diff: t.Optional(
          t.Record(t.String(), t.Object({ before: t.Optional(t.Unknown()), after: t.Optional(t.Unknown()) }), {
            description:
              'With `diff=true`, for the first 100 updates, when the caller may read flags: each changed field as it is now (`before`, absent when unset) and after the import (`after`)',
          }),
        ),
      }),
    ),
    backup: t.Union([t.String(), t.Null()], {
      description: 'File name of the backup in <dataDir>/backups, null when nothing changed or on a dry run',
    }),
    segmentChanges: t.Optional(
      t.Array(t.Object({ name: t.String(), action: t.Union([t.Literal('create'), t.Literal('update'), t.Literal('delete')]) }), {
        description: 'Segments created, updated or deleted; present only when there are any',
      }),
    ),
    warnings: t.Array(t.Object({ field: t.String(), reason: t.String() }), {
      description:
        "What the import translated or dropped (FlagFlow's field names, a value beside valueExists false); empty when nothing was",
    }),
    skipped: t.Array(t.Object({ name: t.String(), reason: t.String() }), {
      description:
        "Flags of another tool's file not imported, by the tool's own key, each with the reason (a rule flagd cannot keep exactly, a name it cannot take, its validation); empty for flagd's own documents",
    }),
    scheduled: t.Optional(
      t.Array(
        t.Object({
          flag: t.String({ description: 'The flag as imported' }),
          at: t.String({ format: 'date-time', description: 'When the change applies' }),
          changeRequest: t.Union([t.String(), t.Null()], {
            description:
              'The scheduled change request made for it (or one already pending with the same change); null on a dry run that would make one',
          }),
          state: t.Union(
            [
              t.Literal('open'),
              t.Literal('approved'),
              t.Literal('scheduled'),
              t.Literal('applied'),
              t.Literal('rejected'),
              t.Literal('cancelled'),
              t.Literal('failed'),
            ],
            {
              description: '`scheduled`: it applies by itself at `at`; `open`: it waits for the approvals the environment needs',
            },
          ),
          note: t.Optional(
            t.String({
              description:
                'Why it will not apply by itself (approvals needed), or will not make the flag serve (the flag is off in a protected environment)',
            }),
          ),
        }),
        {
          description:
            "Changes another tool's file brings later (GO Feature Flag's future `scheduledRollout` steps), each made a scheduled change request of the environment imported into, in the import's commit; present only when there are any",
        },
      ),
    ),
    applyError: ApplyErrorSchema,
  },
  {
    example: {
      dryRun: false,
      mode: 'merge',
      values: 'overwrite',
      source: { environment: 'staging', version: '1.0.0', createdAt: '2026-11-22T10:15:00.123Z' },
      summary: { created: 2, updated: 1, deleted: 0, unchanged: 7 },
      changes: [{ name: 'app/max_retries', action: 'update', fields: ['value', 'maxValue'] }],
      backup: 'flagd_migration_production_20261122-101500.json',
      warnings: [],
      skipped: [],
    },
  },
)
