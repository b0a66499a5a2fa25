/** File stores on fresh temp directories for service tests, closed and removed after each test. */

import { afterEach } from 'bun:test'
import { rmSync } from 'node:fs'
import { openJsonFileStore } from '../../src/storage/json-file-store.ts'
import type { Store } from '../../src/storage/store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { tempDir } from './test-app.ts'

/** Call at a test file's top level; `open()` then gives a new store that `afterEach` closes and removes. */
export function tempFileStores(): { open(): Promise<Store> } {
  const opened: { store: Store; dir: string }[] = []
  afterEach(async () => {
    for (const { store, dir } of opened.splice(0)) {
      await store.close()
      rmSync(dir, { recursive: true, force: true })
    }
  })
  return {
    async open() {
      const dir = tempDir()
      const store = await openJsonFileStore({ now: systemClock, dataDir: dir })
      opened.push({ store, dir })
      return store
    },
  }
}
