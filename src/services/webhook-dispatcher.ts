/**
 * Webhooks (docs/api.md#webhooks): every audit entry that matches a webhook's events is POSTed to it,
 * signed, at least once and in entry order. The audit log is the outbox: each webhook keeps a
 * durable cursor (the id of the last entry it is done with) in `<dataDir>/webhooks.json`, or in the
 * database with replicas, so after a restart (or on the replica that takes over) delivery resumes
 * exactly there, and nothing is skipped or lost. A failed delivery (no 2xx
 * within 10 s) is retried, the first time within 10 s, then with growing delays for over an hour;
 * later entries wait behind it. After the last retry the entry is given up, logged and counted.
 */

import { createHmac } from 'node:crypto'
import type { WebhookConfig } from '../config-schema.ts'
import type { AuditEntry } from '../domain/audit-entry.ts'
import type { Clock } from '../domain/clock.ts'
import type { CursorStore } from '../storage/shared-tables.ts'
import type { Store } from '../storage/store.ts'

/** Retry delays in ms after each failed attempt (sum: 63 min 50 s); the last failure gives up. */
export const RETRY_DELAYS_MS = [5, 15, 30, 60, 120, 300, 600, 900, 900, 900].map((s) => s * 1000)
const ATTEMPT_TIMEOUT_MS = 10_000
const BATCH = 100

/** What the dispatcher reports (log lines and metrics). */
export interface WebhookTelemetry {
  delivered(webhook: string, id: number, status: number, attempt: number): void
  failedAttempt(webhook: string, id: number, why: string, attempt: number, retryInMs: number): void
  gaveUp(webhook: string, id: number, why: string): void
}

/** How much of a receiver's answer is read: its status is what counts, and its body may be huge or endless. */
const ANSWER_BYTES = 4096

/** Reads at most `max` bytes of `stream` and cancels the rest (the connection is then closed). */
async function readAtMost(stream: ReadableStream<Uint8Array> | null, max: number): Promise<void> {
  if (!stream) return
  const reader = stream.getReader()
  let read = 0
  try {
    while (read < max) {
      const { done, value } = await reader.read()
      if (done) return
      read += value.byteLength
    }
  } catch {
    // a receiver that breaks off its answer has still answered with its status
  } finally {
    await reader.cancel().catch(() => {})
  }
}

/** Options of the dispatcher. */
export interface DispatcherOptions {
  /** The process's clock: the signature's timestamp (docs/development.md#time). */
  now: Clock
  cursors: CursorStore
  environment: string
  webhooks: readonly WebhookConfig[]
  telemetry?: WebhookTelemetry
  /** Tests shorten the retry schedule. */
  retryDelaysMs?: readonly number[]
  attemptTimeoutMs?: number
}

/** The running dispatcher. */
export interface WebhookDispatcher {
  start(): void
  stop(): Promise<void>
}

/** True when `action` matches one of `patterns` (`*`, `flag.*`, `flag.updated`). */
export function matchesEvents(action: string, patterns: readonly string[]): boolean {
  return patterns.some((p) => p === '*' || p === action || (p.endsWith('.*') && action.startsWith(p.slice(0, -1))))
}

/** The signature header value: `sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`. */
export function signature(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`
}

/** The delivery body of an entry; a guard's trip adds its source and evidence (docs/guarded-rollouts.md#when-a-guard-trips). */
export function deliveryBody(entry: AuditEntry, environment: string): string {
  const { id, action, at, actor, target, revision, before, after, guard } = entry
  return JSON.stringify({
    id,
    type: action,
    at,
    actor,
    target,
    ...(revision === undefined ? {} : { revision }),
    before,
    after,
    environment,
    ...(guard === undefined ? {} : { source: entry.source, guard }),
  })
}

/** Starts delivering for every configured webhook. */
export function createWebhookDispatcher(store: Store, options: DispatcherOptions): WebhookDispatcher {
  const delays = options.retryDelaysMs ?? RETRY_DELAYS_MS
  // keyed by the configured names: no prototype, so a webhook named constructor or __proto__ has a cursor like any other
  const cursors: Record<string, number> = Object.create(null)
  let stopped = false
  let commits = 0
  const wakers = new Set<() => void>()
  let unsubscribe: (() => void) | undefined
  const loops: Promise<void>[] = []
  const abort = new AbortController()

  let saving: Promise<void> = Promise.resolve()
  const saveCursor = (name: string, id: number) => {
    cursors[name] = id
    const copy = { ...cursors }
    saving = saving.then(() => options.cursors.save(copy)).catch(() => {})
    return saving
  }
  const sleepers = new Set<() => void>() // every sleep: all end at stop
  /** Sleeps `ms`; an idle wait (`onCommit`) also ends at the next commit, a retry delay does not. */
  const sleep = (ms: number, onCommit = false) =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        wakers.delete(done)
        sleepers.delete(done)
        resolve()
      }
      sleepers.add(done)
      if (onCommit) wakers.add(done)
    })

  async function attempt(hook: WebhookConfig, entry: AuditEntry, body: string): Promise<{ ok: boolean; status: number; why: string }> {
    const timestamp = Math.floor(options.now().getTime() / 1000)
    try {
      const res = await fetch(hook.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'user-agent': 'flagd-webhooks',
          'x-flagd-event': entry.action,
          'x-flagd-delivery': String(entry.id),
          'x-flagd-timestamp': String(timestamp),
          'x-flagd-signature': signature(hook.secret, timestamp, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(options.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS), abort.signal]),
      })
      await readAtMost(res.body, ANSWER_BYTES)
      return { ok: res.status >= 200 && res.status < 300, status: res.status, why: `answered ${res.status}` }
    } catch (err) {
      return {
        ok: false,
        status: 0,
        why: (err as Error).name === 'TimeoutError' ? 'no answer within 10 s' : `could not connect (${(err as Error).message})`,
      }
    }
  }

  async function deliver(hook: WebhookConfig, entry: AuditEntry): Promise<void> {
    const body = deliveryBody(entry, entry.environment ?? options.environment)
    for (let n = 0; !stopped; n++) {
      const result = await attempt(hook, entry, body)
      if (stopped) return
      if (result.ok) {
        options.telemetry?.delivered(hook.name, entry.id, result.status, n + 1)
        await saveCursor(hook.name, entry.id)
        return
      }
      const wait = delays[n]
      if (wait === undefined) {
        options.telemetry?.gaveUp(hook.name, entry.id, result.why)
        await saveCursor(hook.name, entry.id)
        return
      }
      options.telemetry?.failedAttempt(hook.name, entry.id, result.why, n + 1, wait)
      await sleep(wait)
    }
  }

  async function run(hook: WebhookConfig): Promise<void> {
    while (!stopped) {
      const seen = commits
      const cursor = cursors[hook.name] ?? 0
      const entries = await store.audit.query({ afterId: cursor, limit: BATCH, maxBytes: 4 * 1024 * 1024 })
      const due = entries.filter((e) => matchesEvents(e.action, hook.events))
      for (const entry of due) {
        if (stopped) return
        await deliver(hook, entry)
      }
      if (stopped) return
      const last = entries.at(-1)
      if (last && last.id > (cursors[hook.name] ?? 0)) await saveCursor(hook.name, last.id) // skipped: not its events
      // nothing left and nothing committed meanwhile: wait for the next commit
      if (entries.length < BATCH && commits === seen) await sleep(60_000, true)
    }
  }

  return {
    start() {
      if (options.webhooks.length === 0) return
      unsubscribe = store.onCommit(() => {
        commits++
        for (const wake of [...wakers]) wake()
      })
      const ready = options.cursors.load().then((saved) => {
        Object.assign(cursors, saved)
        // a webhook without a name was once keyed by its URL: it goes on from that cursor
        for (const hook of options.webhooks) {
          if (cursors[hook.name] === undefined && Object.hasOwn(saved, hook.url)) cursors[hook.name] = saved[hook.url] as number
          delete cursors[hook.url]
        }
        // a webhook seen for the first time starts at the present, not at the beginning of the log;
        // one whose cursor is past the log (a backup put back, docs/operations.md#backups) goes on
        // from the present too, or it would skip the entries that take the restored ids again
        const newest = store.committed().revision
        for (const hook of options.webhooks) {
          const cursor = cursors[hook.name]
          if (cursor === undefined || cursor > newest) void saveCursor(hook.name, newest)
        }
      })
      for (const hook of options.webhooks)
        loops.push(
          ready
            .then(() => run(hook))
            .catch((err) => console.error(`flagd: webhook ${hook.name} stopped: ${(err as Error)?.message ?? err}`)),
        )
    },
    async stop() {
      stopped = true
      unsubscribe?.()
      abort.abort()
      for (const wake of [...sleepers]) wake()
      await Promise.all(loops)
      await saving
    },
  }
}
