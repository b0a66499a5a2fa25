/**
 * docs/operations.md: an acknowledged change survives `kill -9` at any moment. A child commits in a loop
 * and prints each acknowledged key; it is killed with SIGKILL at random moments, then the file must
 * parse and hold every acknowledged key, and reopening leaves no temp file.
 */

import { expect, test } from 'bun:test'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { openJsonFileStore, stateFilePath } from '../../src/storage/json-file-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { runAndKill } from '../helpers/kill-child.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'
import { readStateFile } from '../helpers/state-file.ts'
import { tempDir } from '../helpers/test-app.ts'

// 10 rounds by default keep `bun test` quick; .ci/run sets TEST_FULL_RELIABILITY for the full 30.
const ROUNDS = Number(process.env.CRASH_ROUNDS ?? (process.env.TEST_FULL_RELIABILITY ? 30 : 10))

test(`every acknowledged change survives SIGKILL (${ROUNDS} rounds)`, async () => {
  const dir = tempDir()
  const all: string[] = []
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const acked = await runAndKill([join(import.meta.dir, 'crash-child.ts'), dir, String(round * 1_000_000)])
      all.push(...acked)
      const state = readStateFile(stateFilePath(dir))
      for (const key of all) expect(state.flags.get(key)).toEqual(sampleFlag(key, 'x'.repeat(200)))
    }
    expect(all.length).toBeGreaterThan(ROUNDS)
    const store = await openJsonFileStore({ now: systemClock, dataDir: dir })
    expect(readdirSync(dir).filter((n) => n.includes('.tmp-'))).toEqual([])
    await store.close()
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}, 120_000)
