/**
 * How an administrator's command reaches the services (docs/operations.md): in-process over an open data
 * directory, or through the running daemon's control socket when a daemon holds the directory; and
 * the copy of a stopped data directory into PostgreSQL. The CLI calls these; it never opens storage
 * or speaks to the socket itself.
 */

import { existsSync, readdirSync } from 'node:fs'
import type { Config } from './config.ts'
import { connectControlSocket, controlSocketPath } from './control/control-socket.ts'
import { type AdminApi, createAdminService } from './services/admin-service.ts'
import { createServices, type Services } from './services/services.ts'
import { type CopySummary, copyToPostgres } from './storage/copy-to-postgres.ts'
import { DirectoryInUseError } from './storage/file-lock.ts'
import { stateFilePath } from './storage/json-file-store.ts'
import { openStorage } from './storage/open-storage.ts'
import { systemClock } from './system-clock.ts'

/** The services over an open data directory, without HTTP: what CLI commands use. */
export async function openServices(config: Config): Promise<{ services: Services; close(): Promise<void> }> {
  const { store, failureLedger, usage, guard } = await openStorage(config, {
    now: systemClock,
    log: (line) => console.error(`flagd: ${line}`),
  })
  // commands act in the default the daemon last served: a default named anew in the config is made
  // (as its copy) when the daemon next starts (docs/environments.md#the-default-environment)
  const served = [...store.committed().environments.values()].find((e) => e.default === true)?.name
  if (served !== undefined && served !== config.environment)
    console.error(
      `flagd: the default environment here is ${served}, the one the daemon last served; config names ${config.environment}, which becomes the default when the daemon next starts`,
    )
  const services = createServices(
    store,
    { ...config, environment: served ?? config.environment },
    {
      failureLedger,
      usageLog: usage,
      guardLog: guard,
      now: systemClock,
    },
  )
  return {
    services,
    async close() {
      await services.usage.stop()
      await services.guardMetrics.stop()
      usage.close()
      guard.close()
      await store.close()
    },
  }
}

/**
 * Admin commands never create a data directory or an empty state by accident (docs/operations.md): they
 * refuse a directory that does not exist or holds no state file, naming it and how to point at the
 * right one. `mayInitialise` (only `flagd user add`, the first step of a new install) allows an
 * empty directory, or one that does not exist yet, which opening the store then creates as `serve`
 * does; either way it says so.
 */
function checkExistingState(dataDir: string, mayInitialise: boolean): void {
  const how =
    "point at the daemon's data directory with --data-dir or --config (or FLAGD_DATA_DIR), or run commands from the directory that holds flagd.config.ts"
  if (mayInitialise && !existsSync(dataDir)) {
    console.error(`flagd: creating the data directory ${dataDir} with a new, empty flagd state`)
    return
  }
  if (!existsSync(dataDir)) throw new Error(`no flagd data directory at ${dataDir} (it does not exist); ${how}`)
  if (existsSync(stateFilePath(dataDir))) return
  // a fresh clone's data/ holds only .gitkeep: dotfiles do not make a directory non-empty
  if (mayInitialise && readdirSync(dataDir).every((name) => name.startsWith('.'))) {
    console.error(`flagd: initialising a new, empty flagd state in ${dataDir}`)
    return
  }
  throw new Error(`${dataDir} holds no flagd state (no flagd.json)${mayInitialise ? ' and is not empty' : ''}; ${how}`)
}

/**
 * The administrator's API for a CLI command: in-process when the data directory is free, or through
 * the running daemon's control socket when a daemon holds it (same service code either way).
 */
export async function openAdmin(
  config: Config,
  mayInitialise = false,
): Promise<{ admin: AdminApi; close(): Promise<void>; viaDaemon: boolean }> {
  if (config.storage.backend === 'postgres') {
    // every replica and every command share the database: commands open it themselves, running daemons or not
    const { services, close } = await openServices(config)
    return { admin: createAdminService(services), close, viaDaemon: false }
  }
  checkExistingState(config.dataDir, mayInitialise)
  try {
    const { services, close } = await openServices(config)
    return { admin: createAdminService(services), close, viaDaemon: false }
  } catch (err) {
    if (err instanceof DirectoryInUseError && existsSync(controlSocketPath(config.dataDir))) {
      return { admin: connectControlSocket(config.dataDir), close: async () => {}, viaDaemon: true }
    }
    throw err
  }
}

/** Copies a stopped data directory into an empty PostgreSQL database at `url`. */
export async function copyDataDirToPostgres(config: Config, url: string): Promise<CopySummary> {
  try {
    return await copyToPostgres(config.dataDir, url, systemClock, config.environment)
  } catch (err) {
    if (err instanceof DirectoryInUseError)
      throw new Error(`a daemon is running on ${config.dataDir}: stop it first, so that nothing changes during the copy`)
    throw err
  }
}
