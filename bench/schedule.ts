/**
 * Scheduled changes in `bun run bench` (docs/change-control.md#scheduled-changes): 100 approved change
 * requests scheduled for the same second on the compiled binary; reported: how long after that
 * second the last one was applied (each request's `appliedAt` against its `scheduledAt`).
 */

import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { flagDocument, freePort, loginHeaders, type Row, startBinary } from './fixture.ts'

const REQUESTS = 100

/** The row of the scenario. */
export async function scheduleRow(binary: string, work: string, row: Row): Promise<void> {
  const dir = mkdtempSync(join(work, 'schedule-'))
  const port = freePort()
  const { proc, url } = await startBinary(binary, dir, port)
  try {
    const auth = await loginHeaders(url, 'admin', 'bench-password')
    await fetch(`${url}/api/migrations`, { method: 'PUT', headers: auth, body: JSON.stringify(flagDocument(REQUESTS, 'sched')) })
    // one second far enough ahead for every request to be made before it
    const at = new Date(Math.ceil((Date.now() + 5000) / 1000) * 1000).toISOString()
    const names = Object.keys(flagDocument(REQUESTS, 'sched').flags)
    for (const name of names) {
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
    let applied: { scheduledAt: string; appliedAt?: string }[] = []
    const deadline = Date.parse(at) + 30_000
    while (applied.length < REQUESTS && Date.now() < deadline) {
      await Bun.sleep(100)
      applied = (await (await fetch(`${url}/api/change-requests?state=applied`, { headers: auth })).json()) as typeof applied
    }
    const lateness = applied.map((r) => Date.parse(r.appliedAt as string) - Date.parse(r.scheduledAt))
    const worst = lateness.length === 0 ? Number.POSITIVE_INFINITY : Math.max(...lateness)
    row(
      `${REQUESTS} change requests scheduled for the same second`,
      `${applied.length} applied, the last ${worst.toFixed(0)} ms after its time`,
      'within 1 s',
      applied.length === REQUESTS && worst <= 1000,
      { applied: applied.length, worstMs: worst },
    )
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
  }
}
