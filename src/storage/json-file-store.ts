/**
 * The store: all state in memory, persisted to one JSON file in the data directory through lowdb.
 * Changes are applied synchronously (so each is atomic with respect to other requests) and then
 * group-committed: while one write is on disk, later changes gather into the next write, and every
 * caller's promise resolves only once a write that contains its change is durable.
 */

import { mkdir } from 'node:fs/promises'
import { join } from 'node:path'
import { Low } from 'lowdb'
import { UnavailableError } from '../domain/errors.ts'
import { removeStaleTempFiles } from './atomic-write.ts'
import { DurableJsonAdapter, type FileWriter } from './durable-json-adapter.ts'
import { acquireDirLock, type DirLock } from './file-lock.ts'
import { emptyState, type State } from './state.ts'

/** The store every service works on. */
export interface Store {
  /** The current state. Callers outside `mutate` must treat it as read-only. */
  readonly state: State
  /** False after a failed write: the service refuses changes until restarted. */
  readonly writable: boolean
  /** Grows whenever the in-memory state changes; read models use it to know when to rebuild. */
  readonly version: number
  /**
   * Applies `change` now and resolves with its result once the change is durable. `change` must
   * check everything before it modifies anything: if it throws, the state must be as it was.
   */
  mutate<T>(change: (state: State) => T): Promise<T>
  /** Writes in-memory-only changes (such as session `lastUsedAt`) now. */
  flush(): Promise<void>
  /** Finishes the current commit and releases the data-directory lock. */
  close(): Promise<void>
  /** How many durable writes were made (tests use it to prove that reads never write). */
  readonly stats: { commits: number }
}

/** Options of `openJsonFileStore`. */
export interface StoreOptions {
  dataDir: string
  /** Replaces the durable writer; tests use it to simulate a full disk. */
  writer?: FileWriter
  /** Called after each durable write with its duration and the number of changes it carried. */
  onCommit?: (seconds: number, batchSize: number) => void
  /** Called once when a write fails and the store turns read-only. */
  onFailure?: (error: unknown) => void
}

/** The state file's path inside a data directory. */
export function stateFilePath(dataDir: string): string {
  return join(dataDir, 'flagd.json')
}

interface Batch {
  size: number
  promise: Promise<void>
  resolve(): void
  reject(err: unknown): void
}

function newBatch(): Batch {
  let resolve!: () => void
  let reject!: (err: unknown) => void
  const promise = new Promise<void>((res, rej) => {
    resolve = res
    reject = rej
  })
  promise.catch(() => {}) // callers attach their own handlers; avoid unhandled-rejection noise
  return { size: 0, promise, resolve, reject }
}

/**
 * Opens the data directory: takes its lock (throws `DirectoryInUseError` if another process holds
 * it), removes temp files a crash left, loads the state file (a damaged one throws
 * `CorruptStateError`) or creates an empty one.
 */
export async function openJsonFileStore(options: StoreOptions): Promise<Store> {
  await mkdir(options.dataDir, { recursive: true, mode: 0o700 })
  const lock: DirLock = acquireDirLock(options.dataDir)
  try {
    const path = stateFilePath(options.dataDir)
    await removeStaleTempFiles(path)
    const adapter = new DurableJsonAdapter(path, options.writer)
    const db = new Low<State>(adapter, emptyState())
    await db.read()
    if (adapter.lastWritten === undefined) await db.write()
    return new JsonFileStore(db, adapter, lock, options.onCommit, options.onFailure)
  } catch (err) {
    lock.release()
    throw err
  }
}

class JsonFileStore implements Store {
  private isWritable = true
  private changes = 0
  private pending: Batch | undefined
  private writing: Promise<void> | undefined
  readonly stats = { commits: 0 }

  constructor(
    private readonly db: Low<State>,
    private readonly adapter: DurableJsonAdapter,
    private readonly lock: DirLock,
    private readonly onCommit?: (seconds: number, batchSize: number) => void,
    private readonly onFailure: (error: unknown) => void = (err) =>
      console.error(`flagd: writing the state file failed, the service is now read-only: ${(err as Error)?.message ?? err}`),
  ) {}

  get state(): State {
    return this.db.data
  }

  get version(): number {
    return this.changes
  }

  get writable(): boolean {
    return this.isWritable
  }

  async mutate<T>(change: (state: State) => T): Promise<T> {
    if (!this.isWritable) throw new UnavailableError()
    const result = change(this.db.data)
    this.changes++
    await this.enqueue()
    return result
  }

  async flush(): Promise<void> {
    if (!this.isWritable) return
    await this.enqueue()
  }

  async close(): Promise<void> {
    while (this.writing) await this.writing.catch(() => {})
    this.lock.release()
  }

  private enqueue(): Promise<void> {
    const batch = (this.pending ??= newBatch())
    batch.size++
    this.writing ??= this.drain()
    return batch.promise
  }

  private async drain(): Promise<void> {
    while (this.pending) {
      const batch = this.pending
      this.pending = undefined
      const started = performance.now()
      try {
        await this.db.write()
      } catch (err) {
        this.fail(batch, err)
        break
      }
      this.stats.commits++
      this.onCommit?.((performance.now() - started) / 1000, batch.size)
      batch.resolve()
    }
    this.writing = undefined
  }

  /** A write failed: go read-only, fall back to the last durable state, fail every waiting change. */
  private fail(batch: Batch, cause: unknown): void {
    this.isWritable = false
    const last = this.adapter.lastWritten
    this.db.data = last === undefined ? emptyState() : (JSON.parse(last) as State)
    this.changes++
    this.onFailure(cause)
    const error = new UnavailableError()
    batch.reject(error)
    this.pending?.reject(error)
    this.pending = undefined
  }
}
