/**
 * Every service over a file store in a temp directory, on a clock the test moves: the use cases
 * tested as the HTTP API, the CLI and the watcher call them, without a server (docs/architecture.md).
 */

import { loadConfig } from '../../src/config.ts'
import type { HeldPermission } from '../../src/domain/permission.ts'
import type { Caller, SystemName } from '../../src/domain/principal.ts'
import { createServices, type Services } from '../../src/services/services.ts'
import { fileUsageLog } from '../../src/storage/file-usage-log.ts'
import type { Store } from '../../src/storage/store.ts'
import { tempFileStores } from './temp-store.ts'
import { CHEAP_HASH, SYSTEM } from './test-app.ts'

/** The instant every world's clock starts at. */
export const START = Date.parse('2026-12-01T09:00:00.000Z')

/** The services of one fresh data directory and the clock they read. */
export interface ServiceWorld {
  s: Services
  /** The clock's time in ms since the epoch; `advance` moves it. */
  ms(): number
  advance(byMs: number): void
  /** The data directory (backups land in `backups/`). */
  dir: string
  /** The store the services share (for what a restart would do to it). */
  store: Store
}

/** Options of a world: `FLAGD_*` settings as the environment would give them. */
export interface WorldOptions {
  env?: Record<string, string>
}

/**
 * Call at a test file's top level; `open()` then wires the services over a new temp store (closed
 * and removed after each test), with the default environment made as the daemon makes it at start.
 */
export function tempServices(): { open(options?: WorldOptions): Promise<ServiceWorld> } {
  const stores = tempFileStores()
  return {
    async open(options = {}) {
      let at = START
      const now = () => new Date(at)
      const { store, dir } = await stores.openIn(now)
      const config = await loadConfig({ cwd: dir, env: options.env ?? {}, flags: { dataDir: dir }, warn: () => {} })
      const s = createServices(store, config, { now, hashCost: CHEAP_HASH, usageLog: fileUsageLog(dir) })
      await s.environments.ensureDefault(SYSTEM)
      return { s, dir, store, ms: () => at, advance: (by) => (at += by) }
    },
  }
}

/** Options of a caller made by {@link userCaller}. */
export interface CallerOptions {
  flagPrefixes?: string[]
  via?: 'ui'
}

/**
 * A signed-in person `id` holding `permissions` (the user row need not exist: services judge the
 * principal a request resolved, as the HTTP layer hands it over).
 */
export function userCaller(id: string, permissions: readonly HeldPermission[] | readonly string[], options: CallerOptions = {}): Caller {
  return {
    principal: {
      kind: 'user',
      userId: id,
      username: id,
      sessionId: `ses_${id}`,
      permissions: permissions as HeldPermission[],
      flagPrefixes: options.flagPrefixes ?? [],
    },
    requestId: `req_${id}`,
    ...(options.via ? { via: options.via } : {}),
  }
}

/** A part of flagd acting on its own authority (the command line, the drop folder). */
export const systemCaller = (name: SystemName): Caller => ({ principal: { kind: 'system', name }, requestId: `req_${name}` })

/** What an awaited call threw (or `undefined`): for asserting error codes and details. */
export async function failureOf(work: Promise<unknown> | (() => unknown)): Promise<any> {
  try {
    await (typeof work === 'function' ? work() : work)
    return undefined
  } catch (err) {
    return err
  }
}

/**
 * A person stored as a user of `s` (what a scheduled change request acts as), and a caller for them
 * holding the permissions stored now, as each request resolves them.
 */
export async function storedUser(s: Services, username: string, permissions: readonly string[]): Promise<{ id: string; as(): Caller }> {
  const { id } = await s.users.create(SYSTEM, { username, password: `${username}-password`, permissions })
  return { id, as: () => userCaller(id, s.users.get(SYSTEM.principal, id).permissions) }
}
