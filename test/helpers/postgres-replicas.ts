/**
 * Replicas of one PostgreSQL database for service-level tests (docs/operations.md#replicas): one
 * server for the file, stores opened on a fresh database each in a temp data directory, and all of
 * it closed after each test, in reverse order (what was opened on a store closes before the store).
 */

import { afterAll, afterEach, beforeAll } from 'bun:test'
import { rmSync } from 'node:fs'
import type { SQL } from 'bun'
import { loadConfig } from '../../src/config.ts'
import { createServices, type Services } from '../../src/services/services.ts'
import { fileUsageLog } from '../../src/storage/file-usage-log.ts'
import { openPostgresStore } from '../../src/storage/postgres-store.ts'
import type { Store } from '../../src/storage/store.ts'
import { findPostgresBin, type PostgresServer, startPostgres } from './postgres.ts'
import { CHEAP_HASH, tempDir } from './test-app.ts'

/** A replica: a store on the shared database and the services over it. */
export interface Replica {
  s: Services
  store: Store & { readonly sql: SQL }
}

/** What a replica test file uses; `bin` is null where PostgreSQL is not installed (skip then). */
export interface ReplicaSuite {
  bin: string | null
  /** A fresh database's URL (with `migrated`, flagd's tables already in it). */
  database(options?: { migrated?: boolean }): Promise<string>
  /** A store on `url` in a new temp data directory, closed after the test. */
  store(url: string): Promise<Store & { readonly sql: SQL }>
  /** The services over `store` (a store this suite opened), configured from its data directory. */
  services(store: Store): Promise<Services>
  /** `n` replicas with services on one fresh database. */
  replicas(n: number, options?: { migrated?: boolean }): Promise<Replica[]>
  /** Closes `thing` after the test, before the stores it was opened on. */
  closeLater(thing: { close(): Promise<void> | void }): void
}

/** Registers the file's hooks (server up once, everything closed after each test) on clock `now`. */
export function replicaSuite(now: () => Date): ReplicaSuite {
  const bin = findPostgresBin()
  let server: PostgresServer | undefined
  const opened: { close(): Promise<void> | void }[] = []
  const dirs: string[] = []
  const dirOf = new WeakMap<Store, string>()
  beforeAll(async () => {
    if (bin) server = await startPostgres(bin)
  })
  afterEach(async () => {
    for (const s of opened.splice(0).reverse()) await Promise.resolve(s.close()).catch(() => {})
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true })
  })
  afterAll(async () => {
    await server?.destroy()
  })
  const database = (options?: { migrated?: boolean }) => (server as PostgresServer).freshDatabase(options)
  const store = async (url: string) => {
    const dataDir = tempDir()
    dirs.push(dataDir)
    const opening = await openPostgresStore({ now, url, dataDir, pollMs: 100, livenessMs: 3000 })
    opened.push(opening)
    dirOf.set(opening, dataDir)
    return opening
  }
  const services = async (on: Store) => {
    const dataDir = dirOf.get(on) as string
    const config = await loadConfig({ cwd: dataDir, env: {}, flags: { dataDir }, warn: () => {} })
    return createServices(on, config, { now, hashCost: CHEAP_HASH, usageLog: fileUsageLog(dataDir) })
  }
  return {
    bin,
    database,
    store,
    services,
    async replicas(n, options) {
      const url = await database(options)
      const out: Replica[] = []
      for (let i = 0; i < n; i++) {
        const opening = await store(url)
        out.push({ s: await services(opening), store: opening })
      }
      return out
    },
    closeLater: (thing) => {
      opened.push(thing)
    },
  }
}
