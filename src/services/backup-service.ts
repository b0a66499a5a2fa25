/**
 * `flagd backup` (docs/operations.md#backups): a copy of everything the store holds, in the state
 * file's format, with every change acknowledged before it was asked for. Taken from the running
 * daemon (through the control socket) or from a stopped data directory alike. The file store keeps
 * recent changes in its change journal, so a copy of `flagd.json` alone may lack them; this is the
 * copy that never does.
 */

import { InvalidError } from '../domain/errors.ts'
import type { Store } from '../storage/store.ts'

/** A backup taken. */
export interface Backup {
  text: string
  revision: number
  flags: number
}

/** The backup use case. */
export interface BackupService {
  take(): Promise<Backup>
}

/** The backup service over `store`. */
export function createBackupService(store: Store): BackupService {
  return {
    async take() {
      if (!store.backup) throw new InvalidError('flagd backup copies the file store; back up PostgreSQL with pg_dump')
      return store.backup()
    },
  }
}
