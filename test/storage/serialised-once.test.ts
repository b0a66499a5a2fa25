/**
 * What a commit of the JSON file store costs in serialising (docs/performance.md#imports): each row's
 * JSON is made once, for its change journal line, and the checkpoint's state file reuses it; each
 * audit entry's JSON is made once and written to both journals. The files hold the same bytes as
 * before: the state file and the journals read back as the rows and entries committed.
 */

import { afterEach, expect, test } from 'bun:test'
import { readdirSync, readFileSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { openJsonFileStore, stateFilePath } from '../../src/storage/json-file-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'
import { readStateFileOnly } from '../helpers/state-file.ts'
import { tempDir } from '../helpers/test-app.ts'

const meta = { principal: systemPrincipal('cli'), source: 'cli' as const, requestId: 'once' }
const dirs: string[] = []
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
})

/** A JSON value that counts how many times it is serialised (`toJSON` is not one of its fields). */
class Counted {
  static calls = 0
  readonly size = 'large'
  toJSON() {
    Counted.calls++
    return { size: this.size }
  }
}

test('a committed row is serialised once for the journal and the state file, its audit entry once for both journals', async () => {
  const dir = tempDir()
  dirs.push(dir)
  const store = await openJsonFileStore({ now: systemClock, dataDir: dir, checkpoints: { afterMs: 0 } })
  const row = { ...sampleFlag('counted'), type: 'OBJECT' as const, defaultValue: new Counted() as unknown as Record<string, unknown> }
  Counted.calls = 0
  await store.transact(meta, (tx) => tx.put('flags', row))
  await (store as unknown as { checkpoint(): Promise<void> }).checkpoint()
  // one for the row (change journal line, then state file), one for its audit entry (both journals)
  expect(Counted.calls).toBe(2)
  await store.close()

  // the state file alone (the journal it covers is gone) holds the row as serialised
  expect(readStateFileOnly(stateFilePath(dir)).flags.get('counted')?.defaultValue).toEqual({ size: 'large' })
  const auditDir = join(dir, 'audit')
  const auditLines = readdirSync(auditDir).flatMap((f) => readFileSync(join(auditDir, f), 'utf8').trim().split('\n'))
  const created = auditLines.map((l) => JSON.parse(l)).find((s) => s.entry.action === 'flag.created')
  expect(created.entry.after.defaultValue).toEqual({ size: 'large' })
})
