/**
 * The webhook delivery cursors of a file-store install, in `<dataDir>/webhooks.json` (written
 * atomically); the PostgreSQL store keeps them in the database instead.
 */

import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { writeFileAtomic } from '../io/atomic-write.ts'
import type { CursorStore } from './shared-tables.ts'

/** Cursors in `<dataDir>/webhooks.json`. */
export function fileCursors(dataDir: string): CursorStore {
  const path = join(dataDir, 'webhooks.json')
  return {
    load: async () => (existsSync(path) ? (JSON.parse(readFileSync(path, 'utf8')) as Record<string, number>) : {}),
    save: (cursors) => writeFileAtomic(path, `${JSON.stringify(cursors, null, 2)}\n`),
  }
}
