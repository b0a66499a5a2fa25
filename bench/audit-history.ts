/**
 * The start-up row of `bun run bench` for a long audit history: a data directory holding 100,000
 * audit entries (about 60 MB of journal, written here directly in the journal's own format, as a
 * year of busy use leaves it) against an empty one, started alternately. Goal: start-up time within
 * 1.2 × the empty directory's, and idle memory that does not grow with the history
 * (docs/operations.md#audit-log).
 */

import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Row } from './fixture.ts'
import { spread } from './wrk.ts'

const ENTRIES = 100_000
const PER_SEGMENT = 25_000

/** A data directory at revision ENTRIES whose journal holds one flag update per revision. */
export function auditHistoryDir(dir: string): void {
  const data = join(dir, 'data')
  mkdirSync(join(data, 'audit'), { recursive: true, mode: 0o700 })
  const state = {
    schemaVersion: 3,
    revision: ENTRIES,
    revisions: { flags: ENTRIES, users: 0, sessions: 0, tokens: 0, segments: 0 },
    flags: {},
    users: {},
    sessions: {},
    tokens: {},
    segments: {},
  }
  writeFileSync(join(data, 'flagd.json'), JSON.stringify(state), { mode: 0o600 })
  const start = Date.parse('2026-01-01T00:00:00.000Z')
  for (let first = 1; first <= ENTRIES; first += PER_SEGMENT) {
    const lines: string[] = []
    for (let id = first; id < first + PER_SEGMENT && id <= ENTRIES; id++) {
      const name = `app/g${id % 50}/f${id % 1000}`
      const flag = {
        name,
        type: 'BOOLEAN',
        description: 'a flag of the bench',
        defaultValue: false,
        valueExists: true,
        value: id % 2 === 0,
        revision: id,
      }
      lines.push(
        JSON.stringify({
          entry: {
            id,
            at: new Date(start + id * 60_000).toISOString(),
            actor: { type: 'user', id: 'usr_bench', name: 'admin' },
            source: 'api',
            requestId: `req-${id}`,
            action: 'flag.updated',
            target: { type: 'flag', name },
            revision: id,
            before: { ...flag, value: id % 2 !== 0, revision: id - 1 },
            after: flag,
          },
          flagId: `flg_${id % 1000}`,
        }),
      )
    }
    writeFileSync(join(data, 'audit', `audit-${String(first).padStart(16, '0')}.jsonl`), `${lines.join('\n')}\n`, { mode: 0o600 })
  }
}

/** Starts each directory five times, alternately; `start` answers the time to the first 200 and the idle RSS. */
export async function auditHistoryRow(
  row: Row,
  empty: string,
  history: string,
  start: (dir: string) => Promise<{ startMs: number; idleMb: number }>,
): Promise<void> {
  const runs = { empty: [] as number[], history: [] as number[], emptyMb: [] as number[], historyMb: [] as number[] }
  for (let i = 0; i < 5; i++) {
    const a = await start(empty)
    runs.empty.push(a.startMs)
    runs.emptyMb.push(a.idleMb)
    const b = await start(history)
    runs.history.push(b.startMs)
    runs.historyMb.push(b.idleMb)
  }
  const ratio = spread(runs.history).median / spread(runs.empty).median
  row(
    'start-up with 100,000 audit entries / an empty data directory',
    `${spread(runs.history).median.toFixed(1)} ms / ${spread(runs.empty).median.toFixed(1)} ms = ${ratio.toFixed(2)} ×; idle RSS ${spread(runs.historyMb).median.toFixed(1)} MB / ${spread(runs.emptyMb).median.toFixed(1)} MB`,
    '≤ 1.2 ×',
    ratio <= 1.2,
    runs,
  )
}
