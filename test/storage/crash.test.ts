/**
 * docs/operations.md: an acknowledged change survives `kill -9` at any moment. A child commits in a loop
 * and prints each acknowledged key; it is killed with SIGKILL at random moments, then the state file
 * with its change journal must hold every acknowledged key, reopening leaves no temp file and the
 * audit log names every key. A second run checkpoints every few writes, so kills land in checkpoints.
 */

import { expect, test } from 'bun:test'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { openJsonFileStore, stateFilePath } from '../../src/storage/json-file-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { runAndKill } from '../helpers/kill-child.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'
import { readStateFile, readStateFileOnly } from '../helpers/state-file.ts'
import { tempDir } from '../helpers/test-app.ts'

// 10 rounds (5 with checkpoints) by default keep `bun test` quick; .ci/run sets TEST_FULL_RELIABILITY for 30.
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? (process.env.TEST_FULL_RELIABILITY ? 30 : 10))
const CHECKPOINT_ROUNDS = process.env.TEST_FULL_RELIABILITY || process.env.CRASH_ROUNDS ? ROUNDS : 5

/** Kills a writing child `ROUNDS` times (with `checkpointBytes`, checkpoints run every few writes). */
async function crashRounds(checkpointBytes?: number, rounds = ROUNDS): Promise<void> {
  const dir = tempDir()
  const all: string[] = []
  try {
    for (let round = 0; round < rounds; round++) {
      const args = [join(import.meta.dir, 'crash-child.ts'), dir, String(round * 1_000_000)]
      const acked = await runAndKill(checkpointBytes === undefined ? args : [...args, String(checkpointBytes)])
      all.push(...acked)
      const state = readStateFile(stateFilePath(dir))
      for (const key of all) expect(state.flags.get(key)).toEqual(sampleFlag(key, 'x'.repeat(200)))
    }
    expect(all.length).toBeGreaterThan(rounds)
    const store = await openJsonFileStore({ now: systemClock, dataDir: dir })
    expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([])
    // every acknowledged change has its audit entry, written again at opening where a crash lost it
    const audited = new Set((await store.audit.query({ limit: 100_000 })).map((e) => e.target.name))
    expect(all.filter((key) => !audited.has(key))).toEqual([])
    await store.close()
    // after a clean stop the state file alone holds everything
    const file = readStateFileOnly(stateFilePath(dir))
    for (const key of all) expect(file.flags.has(key)).toBe(true)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

test(`every acknowledged change survives SIGKILL (${ROUNDS} rounds)`, () => crashRounds(), 120_000)

test(
  `every acknowledged change survives SIGKILL during checkpoints (${CHECKPOINT_ROUNDS} rounds, one every ~2 KB of journal)`,
  () => crashRounds(2_000, CHECKPOINT_ROUNDS),
  120_000,
)
