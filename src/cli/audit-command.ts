/** `flagd audit`: who changed what, from a shell, whether or not the daemon runs (docs/api.md#audit-log). */

import { defineCommand } from 'citty'
import type { AuditEntry } from '../domain/audit-entry.ts'
import { configArgs, withAdmin } from './common-args.ts'
import { textTable } from './text-table.ts'

/** What changed in a flag entry, in a few words ("value false → true", "renamed a → b"). */
function summary(e: AuditEntry): string {
  const before = e.before ?? {}
  const after = e.after ?? {}
  if (e.before === null || e.after === null) return ''
  const changed = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
    (k) => !['updatedAt', 'revision', 'createdAt', 'lastUsedAt'].includes(k) && JSON.stringify(before[k]) !== JSON.stringify(after[k]),
  )
  return changed
    .map((k) => (k === 'passwordChanged' ? 'password' : `${k} ${JSON.stringify(before[k]) ?? '-'} → ${JSON.stringify(after[k]) ?? '-'}`))
    .join('; ')
}

/** Entries as an aligned table, newest first. */
export function auditTable(entries: AuditEntry[]): string {
  return textTable([
    ['ID', 'AT', 'ACTOR', 'SOURCE', 'ACTION', 'TARGET', 'REV', 'CHANGE'],
    ...entries.map((e) => [
      String(e.id),
      e.at,
      `${e.actor.type}:${e.actor.name}`,
      e.source,
      e.action,
      e.target.name ?? e.target.id ?? '',
      e.revision === undefined ? '' : String(e.revision),
      summary(e).slice(0, 120),
    ]),
  ])
}

export const auditCommand = defineCommand({
  meta: { name: 'audit', description: 'Show the audit log, newest first (a table on a terminal, --json for scripts)' },
  args: {
    flag: { type: 'string', description: 'Only this flag (followed back through its renames)' },
    actor: { type: 'string', description: 'Only this actor id (user, token, or cli / drop-folder / bootstrap)' },
    action: { type: 'string', description: 'Only actions starting with this, e.g. flag. or user.deleted' },
    since: { type: 'string', description: 'Only entries at or after this ISO 8601 date or time' },
    until: { type: 'string', description: 'Only entries at or before this ISO 8601 date or time' },
    limit: { type: 'string', description: 'How many entries (1-1000, default 100)' },
    before: { type: 'string', description: 'Only entries older than this id (the next page)' },
    json: { type: 'boolean', description: 'Print JSON' },
    ...configArgs,
  },
  async run({ args }) {
    const filter = {
      flag: args.flag,
      actor: args.actor,
      action: args.action,
      since: args.since,
      until: args.until,
      limit: args.limit,
      before: args.before,
    }
    const page = await withAdmin(args, (admin) => admin.listAudit(filter))
    if (args.json) console.log(JSON.stringify(page.entries, null, 2))
    else {
      console.log(page.entries.length === 0 ? 'no entries' : auditTable(page.entries))
      if (page.nextBefore !== undefined) console.error(`more entries: add --before ${page.nextBefore}`)
    }
  },
})
