/** `flagd usage`: which flags are evaluated, how often and when last, and which are stale (docs/api.md#usage). */

import { defineCommand } from 'citty'
import { configArgs, withAdmin } from './common-args.ts'
import { textTable } from './text-table.ts'

export const usageCommand = defineCommand({
  meta: {
    name: 'usage',
    description:
      'Show how often each flag was evaluated over the last 30 days and which are stale (a table on a terminal, --json for scripts)',
  },
  args: {
    stale: { type: 'boolean', description: 'Only the stale flags: neither evaluated nor changed for usage.staleDays' },
    json: { type: 'boolean', description: 'Print JSON' },
    ...configArgs,
  },
  async run({ args }) {
    const all = await withAdmin(args, (admin) => admin.listUsage())
    const shown = args.stale ? all.filter((u) => u.stale) : all
    if (args.json) return console.log(JSON.stringify(shown, null, 2))
    if (shown.length === 0) return console.log(args.stale ? 'no stale flags' : 'no flags')
    console.log(
      textTable([
        ['FLAG', 'EVALUATIONS (30 DAYS)', 'LAST EVALUATED', 'IN-PROCESS', 'STALE'],
        ...shown.map((u) => [u.name, String(u.total), u.lastEvaluatedAt ?? 'never', u.lastSyncedAt ?? '', u.stale ? 'stale' : '']),
      ]),
    )
  },
})
