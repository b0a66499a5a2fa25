/** File stores on fresh temp directories for service tests, closed and removed after each test. */

import { afterEach } from 'bun:test'
import { rmSync } from 'node:fs'
import type { Clock } from '../../src/domain/clock.ts'
import { openJsonFileStore } from '../../src/storage/json-file-store.ts'
import type { Store } from '../../src/storage/store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { tempDir } from './test-app.ts'

/** A store and the temp directory it lives in. */
export interface TempStore {
  store: Store
  dir: string
}

/**
 * Call at a test file's top level; `open()` then gives a new store (on `now`, the system clock by
 * default) that `afterEach` closes and removes; `openIn()` gives its directory too.
 */
export function tempFileStores(): { open(now?: Clock): Promise<Store>; openIn(now?: Clock): Promise<TempStore> } {
  const opened: TempStore[] = []
  afterEach(async () => {
    for (const { store, dir } of opened.splice(0)) {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
  const openIn = async (now: Clock = systemClock): Promise<TempStore> => {
    const dir = tempDir()
    const store = await openJsonFileStore({ now, dataDir: dir })
    opened.push({ store, dir })
    return { store, dir }
  }
  return { openIn, open: async (now) => (await openIn(now)).store }
}
