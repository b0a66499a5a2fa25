/** Export and import of flags (contract §6): /api/migrations*, and the public /migration/export. */

import { Elysia, type Static } from 'elysia'
import type { ExportAudience, ImportOptions, MigrationService } from '../../services/migration-service.ts'
import { type GuardDeps, guard } from '../auth-guard.ts'
import { JSON_TYPE } from '../error-handler.ts'
import { callerOf, principalOf } from '../request-context.ts'
import { routeDoc } from '../route-docs.ts'
import { NoQuery } from '../schemas/common-schemas.ts'
import { ExportDocumentSchema, ImportDocumentSchema, ImportQuery, ImportResultSchema, UrlImportBody } from '../schemas/migration-schemas.ts'

/** Dependencies of the migration routes. */
export interface MigrationRouteDeps extends GuardDeps {
  migrations: MigrationService
  bodyLimit: number
  importLimit: number
  publicExport: boolean
}

type Query = { mode?: 'merge' | 'replace'; values?: 'overwrite' | 'keep'; dryRun?: 'true' | 'false' }

const optionsOf = (q: Query): ImportOptions => ({ mode: q.mode ?? 'merge', values: q.values ?? 'overwrite', dryRun: q.dryRun === 'true' })

const exportDoc = (access: 'public' | 'migration:read') =>
  routeDoc({
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
      schema: ExportDocumentSchema,
      description: 'The export document',
      headers: { 'Content-Disposition': 'attachment; filename=...' },
    },
    errors: [400],
  })

/** The migration routes. */
export function migrationRoutes(deps: MigrationRouteDeps) {
  const { migrations } = deps
  const exportResponse = (audience: ExportAudience) => {
    const { text, fileName } = migrations.exportFile(audience)
    return new Response(text, {
      headers: { 'content-type': JSON_TYPE, 'content-disposition': `attachment; filename="${fileName}"` },
    })
  }
  const routes = new Elysia({ name: 'migration-routes' })
    .get('/api/migrations/export', ({ request }) => exportResponse(principalOf(request)), {
      ...guard(deps, { permission: 'migration:read', unscoped: true }),
      query: NoQuery,
      detail: exportDoc('migration:read'),
    })
    .put(
      '/api/migrations',
      ({ body, query, request }) => migrations.importDocument(callerOf(request), body, optionsOf(query), 'import-upload'),
      {
        ...guard(deps, { permission: 'migration:write', unscoped: true, bodyLimit: deps.importLimit }),
        query: ImportQuery,
        detail: routeDoc({
          summary: 'Import a migration file',
          operationId: 'importMigration',
          tag: 'migrations',
          access: 'migration:write',
          description:
            'The whole document is validated first and every problem reported in details.errors; a valid one is applied atomically in one durable write. ' +
            'When something changes, the flags as they were are saved to <dataDir>/backups first. Importing the same file twice changes nothing the second time.',
          body: ImportDocumentSchema,
          success: { status: 200, schema: ImportResultSchema, description: 'What changed (or would, on a dry run)' },
          errors: [400, 413, 415, 503],
        }),
      },
    )
    .patch(
      '/api/migrations',
      ({ body, query, request }) =>
        migrations.importFromUrl(callerOf(request), (body as Static<typeof UrlImportBody>).url, optionsOf(query)),
      {
        ...guard(deps, { permission: 'migration:write', unscoped: true, bodyLimit: deps.bodyLimit, schema: UrlImportBody }),
        query: ImportQuery,
        detail: routeDoc({
          summary: 'Import a migration file from a URL',
          operationId: 'importMigrationFromUrl',
          tag: 'migrations',
          access: 'migration:write',
          body: UrlImportBody,
          description:
            'http or https only; the host must resolve to public addresses unless listed in import.allowedHosts (400 with details.field "url"). ' +
            'At most 3 redirects, 10 s, 16 MiB; a remote that fails answers 502.',
          success: { status: 200, schema: ImportResultSchema, description: 'What changed (or would, on a dry run)' },
          errors: [400, 413, 415, 502, 503],
        }),
      },
    )
  if (!deps.publicExport) return routes
  return routes.get('/migration/export', () => exportResponse('public'), { query: NoQuery, detail: exportDoc('public') })
}
