/**
 * The exports (docs/migrations.md, docs/targeting.md#flagd-format): the migration document, and OpenFeature flagd's document of
 * every flag and segment. Both are built from one committed snapshot; the flags' texts (big, and
 * maybe public) are encoded once, by the environment's served snapshot (`served-snapshot.ts`).
 */

import { requirePermission, requireUnscoped } from '../domain/access-policy.ts'
import type { Clock } from '../domain/clock.ts'
import { NotFoundError } from '../domain/errors.ts'
import { buildExportDocument, type ExportDocument, exportFileName, exportTextWithFlags } from '../domain/export-document.ts'
import type { Flag } from '../domain/flag.ts'
import { environmentOf, type Principal } from '../domain/principal.ts'
import type { Segment } from '../domain/segment.ts'
import { utcStamp } from '../domain/utc-stamp.ts'
import type { Snapshot, Store } from '../storage/store.ts'
import { flagView } from './environment-views.ts'
import { createServedSnapshots, type ServedSnapshots } from './served-snapshot.ts'

/** Who may download the export: a principal with `migration:read`, or anyone on the public route. */
export type ExportAudience = Principal | 'public'

/** The export use cases. */
export interface MigrationExport {
  /** `env` (docs/environments.md): whose states the file carries, and the name it gives (default: the default environment). */
  exportDocument(audience: ExportAudience, env?: string): { document: ExportDocument; fileName: string }
  /** The export as file text, the flags part cached by the flags' revision (it is public and big). */
  exportFile(audience: ExportAudience, env?: string): { text: string; fileName: string }
  /**
   * OpenFeature flagd's document of every flag and segment, with its ETag (docs/targeting.md#flagd-format):
   * of `env`, else of the environment a token asking evaluates (what in-process providers read,
   * docs/environments.md#export-and-import), else of the default one.
   */
  exportFlagd(audience: ExportAudience, env?: string): { text: string; fileName: string; etag: string; flags: number }
}

/** What the exports need. */
export interface MigrationExportDeps {
  store: Store
  environment: string
  publicExport: boolean
  now: Clock
  /** What each environment serves, shared with evaluation and sync (default: the exports' own). */
  snapshots?: ServedSnapshots
}

/** The segments of a snapshot in name order. */
export function sortedSegments(snapshot: Snapshot): Segment[] {
  return [...snapshot.segments.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
}

/** The flags of a snapshot in name order, as environment `env` sees them. */
export function sortedFlags(snapshot: Snapshot, env: string): Flag[] {
  const rows = [...snapshot.flags.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return rows.map((row) => flagView(row, env))
}

/** Creates the export use cases over a store. */
export function createMigrationExport(deps: MigrationExportDeps): MigrationExport {
  const { store, environment } = deps
  const now = deps.now
  const authorize = (audience: ExportAudience) => {
    if (audience === 'public') {
      if (!deps.publicExport) throw new NotFoundError('the public export is turned off (publicExport: false)')
    } else {
      requirePermission(audience, 'migration:read')
      requireUnscoped(audience)
    }
  }
  const snapshots = deps.snapshots ?? createServedSnapshots()
  /** The environment asked for (404 when unknown), its name, and its flags in name order. */
  const inEnvironment = (snapshot: Snapshot, env: string | undefined) => {
    if (env !== undefined && !snapshot.environments.has(env)) throw new NotFoundError(`no environment named ${JSON.stringify(env)}`)
    const seen = env ?? environment
    // views carry the revision each one last saw a flag change at
    return { name: seen, flags: () => sortedFlags(snapshot, seen) }
  }

  return {
    exportDocument(audience, env) {
      authorize(audience)
      const at = now()
      const snapshot = store.committed()
      const chosen = inEnvironment(snapshot, env)
      return {
        document: buildExportDocument(chosen.flags(), chosen.name, at, sortedSegments(snapshot)),
        fileName: exportFileName(chosen.name, at),
      }
    },

    exportFile(audience, env) {
      authorize(audience)
      const snapshot = store.committed()
      const chosen = inEnvironment(snapshot, env)
      const at = now()
      const flags = snapshots.of(snapshot, chosen.name).exportFlags(at.getTime())
      return {
        text: exportTextWithFlags(chosen.name, at, flags, sortedSegments(snapshot)),
        fileName: exportFileName(chosen.name, at),
      }
    },

    exportFlagd(audience, env) {
      authorize(audience)
      const snapshot = store.committed()
      // the flagd format is read by providers to evaluate: a token's environment, as OFREP and the sync protocol serve it
      const seen = env ?? (audience === 'public' ? undefined : environmentOf(audience))
      const chosen = inEnvironment(snapshot, seen)
      const etag = `"flagd-${chosen.name}-${snapshot.revisionOf('flags')}-${snapshot.revisionOf('segments')}"`
      const flagd = snapshots.of(snapshot, chosen.name).flagd(chosen.name)
      return { text: flagd.file, etag, flags: flagd.names.size, fileName: `flagd_flags_${chosen.name}_${utcStamp(now())}.json` }
    },
  }
}
