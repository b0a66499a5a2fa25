/**
 * docs/api.md#audit-log durability: after `kill -9` at any moment, state and audit log agree both ways. For
 * every flag the newest entry carries its current revision, no entry describes a change that was not
 * applied (none past the state's revision), ids only increase, and every acknowledged change has its
 * entry.
 */

import { expect, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { join } from 'node:path'
import { openJsonFileStore } from '../../src/storage/json-file-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { runAndKill } from '../helpers/kill-child.ts'
import { tempDir } from '../helpers/test-app.ts'

const ROUNDS = Number(process.env.CRASH_ROUNDS ?? (process.env.TEST_FULL_RELIABILITY ? 30 : 8))

test(`state and audit log agree after SIGKILL at any moment (${ROUNDS} rounds)`, async () => {
  const dir = tempDir()
  const acknowledged: string[] = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      acknowledged.push(...(await runAndKill([join(import.meta.dir, 'audit-crash-child.ts'), dir])))
      const store = await openJsonFileStore({ now: systemClock, dataDir: dir })
      try {
        const snapshot = store.committed()
        const entries = await store.audit.query({ limit: 1_000_000, afterId: 0 }) // oldest first
        const ids = entries.map((e) => e.id)
        expect(ids).toEqual([...ids].sort((a, b) => a - b))
        expect(new Set(ids).size).toBe(ids.length)
        expect(Math.max(0, ...ids)).toBeLessThanOrEqual(snapshot.revision)
        for (const flag of snapshot.flags.values()) {
          const newest = entries
            .filter((e) => e.target.type === 'flag' && ((e.after?.name ?? e.before?.name) === flag.name || e.before?.name === flag.name))
            .at(-1)
          expect(newest?.after?.revision, flag.name).toBe(flag.revision)
          expect(newest?.after?.name).toBe(flag.name)
        }
        const recorded = new Set(entries.map((e) => `${e.after?.name} ${e.after?.revision}`))
        for (const line of acknowledged) {
          const [, name, revision] = line.split(' ')
          expect(recorded.has(`${name} ${revision}`), line).toBe(true)
        }
      } finally {
        await store.close()
      }
    }
    expect(acknowledged.length).toBeGreaterThan(ROUNDS)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}, 180_000)
