/**
 * What counting evaluations (docs/openfeature.md, usage) costs the OFREP path, in `bun run bench`: two daemons of
 * the same binary, counting on and off (`usage.count`), seeded alike, run at once pinned to one core
 * and loaded at once from the other (as `bench/contest.ts` does), so a slow moment of the machine
 * slows both alike. Reported as the throughput with counting over the throughput without.
 */

import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { flagDocument, freePort, loginHeaders, waitFor } from './fixture.ts'
import { token as evaluateToken } from './ofrep.ts'
import { pinnedRound, spread } from './wrk.ts'

type Row = (scenario: string, result: string, goal: string, met: boolean, raw: unknown) => void

const ROUNDS = 9
const SECONDS = 4

async function daemon(binary: string, work: string, count: boolean, procs: Subprocess[]) {
  const dir = mkdtempSync(join(work, count ? 'count-on-' : 'count-off-'))
  const port = freePort()
  const env = {
    PATH: process.env.PATH ?? '',
    FLAGD_ADMIN_USERNAME: 'admin',
    FLAGD_ADMIN_PASSWORD: 'bench-password',
    FLAGD_USAGE_COUNT: String(count),
  }
  procs.push(
    Bun.spawn(['taskset', '-c', '0', binary, 'serve', '--port', String(port), '--data-dir', join(dir, 'data')], {
      cwd: dir,
      env,
      stdout: Bun.file(join(dir, 'flagd.log')),
      stderr: 'inherit',
    }),
  )
  const url = `http://127.0.0.1:${port}`
  await waitFor(`${url}/health`)
  const auth = await loginHeaders(url, 'admin', 'bench-password')
  await fetch(`${url}/api/migrations`, { method: 'PUT', headers: auth, body: JSON.stringify(flagDocument(1000, 'app')) })
  return { url, token: await evaluateToken({ url, auth }, 'bench') }
}

/** Both daemons at once, `ROUNDS` times: each round's throughput with counting over without. */
async function race(
  sides: { url: string; headers: Record<string, string> }[],
  path: string,
  body: string,
  work: string,
): Promise<number[]> {
  const script = join(work, `usage-${Math.random().toString(36).slice(2)}.lua`)
  await Bun.write(script, `wrk.method = "POST"\nwrk.body = '${body}'\nwrk.headers["Content-Type"] = "application/json"\n`)
  const ratios: number[] = []
  for (let round = 0; round < ROUNDS; round++) {
    const [on, off] = await pinnedRound(sides, path, script, SECONDS)
    ratios.push((on?.rps ?? 0) / (off?.rps ?? 1))
  }
  return ratios
}

/** The two rows: OFREP single evaluations and bulk answers of 1,000 flags answered 304. */
export async function countingCostRows(binary: string, work: string, row: Row): Promise<void> {
  const procs: Subprocess[] = []
  try {
    const on = await daemon(binary, work, true, procs)
    const off = await daemon(binary, work, false, procs)
    const body = '{"context":{"targetingKey":"user-42"}}'
    const single = await race(
      [on, off].map((d) => ({ url: d.url, headers: { 'x-api-key': d.token } })),
      '/ofrep/v1/evaluate/flags/app/g07/f507',
      body,
      work,
    )
    const tagged = await Promise.all(
      [on, off].map(async (d) => {
        const res = await fetch(`${d.url}/ofrep/v1/evaluate/flags`, {
          method: 'POST',
          headers: { 'x-api-key': d.token, 'content-type': 'application/json' },
          body,
        })
        return { url: d.url, headers: { 'x-api-key': d.token, 'if-none-match': res.headers.get('etag') ?? '' } }
      }),
    )
    const bulk = await race(tagged, '/ofrep/v1/evaluate/flags', body, work)
    for (const [name, ratios] of [
      ['POST /ofrep/v1/evaluate/flags/{key}', single],
      ['POST /ofrep/v1/evaluate/flags (1,000 flags) answered 304', bulk],
    ] as const) {
      const s = spread(ratios)
      row(
        `usage counting: ${name}, counting on against off (both at once on one core)`,
        `${s.median.toFixed(3)} × (${s.min.toFixed(3)}–${s.max.toFixed(3)} over ${ROUNDS} rounds)`,
        '≥ 0.97 × (counting costs at most 3 %)',
        s.median >= 0.97,
        ratios,
      )
    }
  } finally {
    for (const p of procs) p.kill()
  }
}
