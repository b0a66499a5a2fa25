/**
 * The store and audit contract suites on the PostgreSQL store, against a real server
 * (test/helpers/postgres.ts), each test on a copy of a database that holds the tables already
 * (creating them is what postgres-replicas.test.ts and postgres-upgrade.test.ts start with).
 */

import { afterAll, beforeAll } from 'bun:test'
import { rmSync } from 'node:fs'
import { openPostgresStore } from '../../src/storage/postgres-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { findPostgresBin, type PostgresServer, startPostgres } from '../helpers/postgres.ts'
import { tempDir } from '../helpers/test-app.ts'
import { describeAuditContract } from './audit-contract.ts'
import { describeStoreContract } from './store-contract.ts'

const bin = findPostgresBin()
let server: PostgresServer | undefined

beforeAll(async () => {
  if (bin) server = await startPostgres(bin)
})
afterAll(async () => {
  await server?.destroy()
})

if (bin) {
  describeStoreContract(
    'PostgreSQL',
    async () => {
      const dataDir = tempDir()
      const url = await server!.freshDatabase({ migrated: true })
      return {
        dataDir,
        open: () => openPostgresStore({ now: systemClock, url, dataDir }),
        destroy: async () => rmSync(dataDir, { recursive: true, force: true }),
        replica: () => openPostgresStore({ now: systemClock, url, dataDir }),
      }
    },
    { replicas: true },
  )
  describeAuditContract('PostgreSQL', async () => {
    const dataDir = tempDir()
    const url = await server!.freshDatabase({ migrated: true })
    return {
      open: (options) => openPostgresStore({ now: systemClock, url, dataDir, ...options }),
      destroy: async () => rmSync(dataDir, { recursive: true, force: true }),
    }
  })
}
