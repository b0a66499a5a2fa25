/** `flagd backup` on a store without a state file (PostgreSQL): a clear refusal naming pg_dump, never an empty backup. */

import { expect, test } from 'bun:test'
import { createBackupService } from '../../src/services/backup-service.ts'
import type { Store } from '../../src/storage/store.ts'

test('a store with no backup of its own is refused with a sentence naming pg_dump', async () => {
  const postgresLike = {} as Store // the PostgreSQL store has no `backup`
  await expect(createBackupService(postgresLike).take()).rejects.toMatchObject({
    code: 'INVALID_REQUEST',
    message: 'flagd backup copies the file store; back up PostgreSQL with pg_dump',
  })
})
