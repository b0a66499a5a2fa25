/** Export and import of flags (docs/migrations.md): /api/migrations*, and the public /migration/export. */

import { type Static, t } from 'elysia'
import type { ExportAudience } from '../../services/migration-export.ts'
import type { ImportOptions, MigrationService } from '../../services/migration-service.ts'
import { customAnswer, notModifiedAnswer } from '../answers.ts'
import { JSON_TYPE } from '../error-handler.ts'
import { noneMatch } from '../if-match.ts'
import { readImportBody, TEXT_BODY_TYPES } from '../import-body.ts'
import type { RequestContext } from '../request-context.ts'
import type { RouteDoc } from '../route-docs.ts'
import { type QueryOf, type RouteSpec, route } from '../route-spec.ts'
import {
  ExportDocumentSchema,
  FlagdDocumentSchema,
  ImportDocumentSchema,
  ImportQuery,
  ImportResultSchema,
  UrlImportBody,
} from '../schemas/migration-schemas.ts'

/** Dependencies of the migration routes. */
export interface MigrationRouteDeps {
  migrations: MigrationService
  bodyLimit: number
  importLimit: number
  publicExport: boolean
}

const optionsOf = (q: QueryOf<typeof ImportQuery>): ImportOptions => ({
  mode: q.mode ?? 'merge',
  values: q.values ?? 'overwrite',
  dryRun: q.dryRun === 'true',
  diff: q.diff === 'true',
  ...(q.environment !== undefined ? { environment: q.environment } : {}),
  ...(q.format !== undefined ? { format: q.format } : {}),
  ...(q.sourceEnvironment !== undefined ? { sourceEnvironment: q.sourceEnvironment } : {}),
})

const exportDoc = (access: 'public' | 'migration:read'): RouteDoc => ({
  summary: access === 'public' ? 'Download the migration file (public)' : 'Download the migration file',
  operationId: access === 'public' ? 'exportMigrationPublic' : 'exportMigration',
  tag: 'migrations',
  access,
  description:
    'Every flag with its definition, constraints, value and default; nothing else (no users, sessions or secrets). ' +
    'Sent with Content-Disposition: attachment; filename="flagd_migration_<ENVIRONMENT>_<YYYYMMDD-HHMMSS>.json".' +
    (access === 'public' ? ' Turned off (404) with publicExport: false.' : ''),
  success: {
    status: 200,
    schema: { oneOf: [ExportDocumentSchema, FlagdDocumentSchema] },
    description: 'The export document (format=flagd: an OpenFeature flagd flag-definition document)',
    headers: { 'Content-Disposition': 'attachment; filename=...', ETag: 'format=flagd: changes with every flag or segment change' },
  },
  headers: [{ name: 'If-None-Match', description: 'format=flagd: an ETag from an earlier answer; 304 while it is current' }],
  other: { 304: { description: 'Not modified (format=flagd)' } },
  errors: [400],
})

/** `?format=`: the migration file (default) or OpenFeature flagd's document (docs/targeting.md#flagd-format). */
const ExportQuery = t.Object(
  {
    format: t.Optional(
      t.Union([t.Literal('migration'), t.Literal('flagd')], {
        description:
          "flagd: OpenFeature flagd's flag-definition document (https://flagd.dev/schema/v0/flags.json), for flagd and its providers",
      }),
    ),
    environment: t.Optional(
      t.String({ description: 'Whose flag states to export (docs/environments.md); the default environment when absent' }),
    ),
  },
  { additionalProperties: false },
)

/** The migration routes. */
export function migrationRoutes(deps: MigrationRouteDeps): RouteSpec[] {
  const { migrations } = deps
  const exportAnswer = (c: RequestContext<QueryOf<typeof ExportQuery>>, audience: ExportAudience) => {
    const { format, environment } = c.query
    if (format === 'flagd') {
      const { text, fileName, etag } = migrations.exportFlagd(audience, environment)
      if (noneMatch(c.request.headers.get('if-none-match'), etag)) return notModifiedAnswer(c.id, etag)
      return customAnswer(c.id, text, 200, { 'content-type': JSON_TYPE, 'content-disposition': `attachment; filename="${fileName}"`, etag })
    }
    const { text, fileName } = migrations.exportFile(audience, environment)
    return customAnswer(c.id, text, 200, { 'content-type': JSON_TYPE, 'content-disposition': `attachment; filename="${fileName}"` })
  }
  const routes = [
    route({
      method: 'GET',
      path: '/api/migrations/export',
      compress: true,
      permission: 'migration:read',
      unscoped: true,
      query: ExportQuery,
      handle: (c) => exportAnswer(c, c.auth),
      docs: exportDoc('migration:read'),
    }),
    route({
      method: 'PUT',
      path: '/api/migrations',
      permission: 'migration:write',
      unscoped: true,
      query: ImportQuery,
      body: { limit: deps.importLimit, read: readImportBody },
      handle: (c) => migrations.importDocument(c.caller, c.body, optionsOf(c.query), 'import-upload'),
      docs: {
        summary: 'Import a migration file',
        operationId: 'importMigration',
        tag: 'migrations',
        access: 'migration:write',
        description:
          'The whole document is validated first and every problem reported in details.errors; a valid one is applied atomically in one durable write. ' +
          'When something changes, the flags as they were are saved to <dataDir>/backups first. Importing the same file twice changes nothing the second time. ' +
          "With format, the body is another tool's file (docs/migrations.md#from-other-tools), translated first; a YAML or TOML body (flipt, gofeatureflag) that cannot be parsed is a 400 on body.",
        body: {
          oneOf: [
            ImportDocumentSchema,
            FlagdDocumentSchema,
            { description: "With format: the tool's own file (LaunchDarkly's REST list may be a bare array)" },
          ],
        },
        bodyTypes: TEXT_BODY_TYPES.map((type) => ({
          type,
          description: "With format=flipt or format=gofeatureflag: the tool's file as YAML or TOML",
        })),
        success: { status: 200, schema: ImportResultSchema, description: 'What changed (or would, on a dry run)' },
        errors: [400, 409, 413, 415, 503],
      },
    }),
    route({
      method: 'PATCH',
      path: '/api/migrations',
      permission: 'migration:write',
      unscoped: true,
      query: ImportQuery,
      body: { limit: deps.bodyLimit, schema: UrlImportBody },
      handle: (c) => migrations.importFromUrl(c.caller, (c.body as Static<typeof UrlImportBody>).url, optionsOf(c.query)),
      docs: {
        summary: 'Import a migration file from a URL',
        operationId: 'importMigrationFromUrl',
        tag: 'migrations',
        access: 'migration:write',
        body: UrlImportBody,
        description:
          'http or https only; the host must resolve to public addresses unless listed in import.allowedHosts (400 with details.field "url"). ' +
          'At most 3 redirects, 10 s, 16 MiB; a remote that fails answers 502. ' +
          "With format, the document is another tool's file; for flipt and gofeatureflag it may be YAML or TOML (by its Content-Type or its name's ending).",
        success: { status: 200, schema: ImportResultSchema, description: 'What changed (or would, on a dry run)' },
        errors: [400, 409, 413, 415, 502, 503],
      },
    }),
  ]
  if (!deps.publicExport) return routes
  return [
    ...routes,
    route({
      method: 'GET',
      path: '/migration/export',
      compress: true,
      authenticate: false,
      query: ExportQuery,
      handle: (c) => exportAnswer(c, 'public'),
      docs: exportDoc('public'),
    }),
  ]
}
