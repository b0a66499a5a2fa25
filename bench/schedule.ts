/**
 * Scheduled changes in `bun run bench` (docs/change-control.md#scheduled-changes): 1,000 approved
 * change requests scheduled for the same second on the compiled binary; reported: how long after
 * that second the last one was applied (each request's `appliedAt` against its `scheduledAt`) and
 * when the API first showed them all applied (polled every 100 ms).
 */

import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { flagDocument, freePort, loginHeaders, type Row, startBinary } from './fixture.ts'

const REQUESTS = Number(process.env.BENCH_SCHEDULED ?? 1000)
/** Requests made at once (the daemon commits them together). */
const MAKING = 16

/** The row of the scenario. */
export async function scheduleRow(binary: string, work: string, row: Row): Promise<void> {
  const dir = mkdtempSync(join(work, 'schedule-'))
  const port = freePort()
  const { proc, url } = await startBinary(binary, dir, port)
  try {
    const auth = await loginHeaders(url, 'admin', 'bench-password')
    await fetch(`${url}/api/migrations`, { method: 'PUT', headers: auth, body: JSON.stringify(flagDocument(REQUESTS, 'sched')) })
    // one second far enough ahead for every request to be made before it
    const at = new Date(Math.ceil((Date.now() + 20_000) / 1000) * 1000).toISOString()
    const names = Object.keys(flagDocument(REQUESTS, 'sched').flags)
    const make = async (name: string) => {
      const res = await fetch(`${url}/api/change-requests`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({
          environment: 'development',
          title: `raise ${name}`,
          changes: [{ flag: name, set: { value: 7 } }],
          scheduledAt: at,
        }),
      })
      if (res.status !== 201) throw new Error(`change request: ${res.status} ${await res.text()}`)
    }
    for (let i = 0; i < names.length; i += MAKING) await Promise.all(names.slice(i, i + MAKING).map(make))
    if (Date.now() >= Date.parse(at)) throw new Error(`making ${REQUESTS} change requests took past their time: raise the lead`)
    let applied: { scheduledAt: string; appliedAt?: string }[] = []
    let seenMs = Number.POSITIVE_INFINITY
    const deadline = Date.parse(at) + 90_000
    while (Date.now() < deadline) {
      await Bun.sleep(100)
      applied = (await (await fetch(`${url}/api/change-requests?state=applied`, { headers: auth })).json()) as typeof applied
      if (applied.length === REQUESTS) {
        seenMs = Date.now() - Date.parse(at)
        break
      }
    }
    const lateness = applied.map((r) => Date.parse(r.appliedAt as string) - Date.parse(r.scheduledAt))
    const worst = lateness.length === 0 ? Number.POSITIVE_INFINITY : Math.max(...lateness)
    row(
      `${REQUESTS} change requests scheduled for the same second`,
      `${applied.length} applied, the last ${worst.toFixed(0)} ms after its time (all shown applied after ${seenMs.toFixed(0)} ms)`,
      'within 1 s',
      applied.length === REQUESTS && worst <= 1000,
      { applied: applied.length, worstMs: worst, seenMs },
    )
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}
