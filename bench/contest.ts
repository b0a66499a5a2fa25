/**
 * `bun bench/contest.ts <checkout> [<checkout>|<checkout>|ENV=value ...]`: an A/B of the request path
 * that machine noise cannot blur. Every contestant (a flagd checkout run from source, or a compiled
 * binary such as dist/flagd, with optional
 * FLAGD_* settings after `|`) and a bare Bun.serve returning the same bytes run at once, all pinned
 * to CPU 0, each loaded by its own wrk pinned to CPU 1, for the same seconds. The scheduler shares
 * the core between them, so each one's throughput is inversely proportional to its CPU cost per
 * request, and a slow moment of the machine slows them all alike: ratios between contestants vary
 * by about ±3% from round to round, against ±15% for runs taken one after another on a shared VM.
 * It is how each change of the request path was measured (figures in the commit messages); the
 * ratio to bare is lower than `bun run bench` shows, since here flagd also pays for the CPU time
 * the kernel spends on its sockets.
 *
 * CONTEST_PATH (default /api/flags/app/g07/f507), CONTEST_BODY (POSTs it as JSON), CONTEST_API_KEY=1
 * (an API token instead of a session), CONTEST_ROUNDS (5), CONTEST_SECONDS (4), CONTEST_FLOOR=1 (adds the
 * contract's floor, `floor-server.ts`, for `/health` or a flag read), CONTEST_IF_NONE_MATCH=1 (each
 * contestant is asked with the ETag of its own answer, so it answers 304: the bulk-304 row);
 * `<checkout>|CONTEST_ROLLOUT=1` gives that contestant's flag of PATH a rollout, `=rule` a plain
 * rule (the rollout row: the same checkout with a rollout, against a rule or nothing).
 * CONTEST_ACCEPT_ENCODING (e.g. `gzip`), for all or as `<checkout>|CONTEST_ACCEPT_ENCODING=gzip` for
 * one contestant, sends that Accept-Encoding: the compressed-download row, a checkout asked for
 * gzip against the same checkout asked for identity, with
 * `CONTEST_PATH='/api/migrations/export?format=flagd'` (a provider's configuration download) or
 * the OFREP bulk evaluation. Needs wrk and taskset.
 */

import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'
import { flagDocument, floorCommand, loginHeaders, waitFor } from './fixture.ts'
import { ensureWrk, pinnedRound, spread } from './wrk.ts'

const contestants = process.argv.slice(2)
if (contestants.length === 0) throw new Error('usage: bun bench/contest.ts <flagd checkout>[|FLAGD_X=value…] …')
const PATH = process.env.CONTEST_PATH ?? '/api/flags/app/g07/f507'
const BODY = process.env.CONTEST_BODY
const ROUNDS = Number(process.env.CONTEST_ROUNDS ?? 5)
const SECONDS = Number(process.env.CONTEST_SECONDS ?? 4)
const PASSWORD = 'contest-password'
const work = mkdtempSync(join(tmpdir(), 'flagd-contest-'))
const procs: Subprocess[] = []
let nextPort = 30_000 + Math.floor(Math.random() * 5000)

/** Starts one contestant on CPU 0 with 1,000 flags; returns its URL and the headers of its credential. */
async function start(spec: string): Promise<{ url: string; headers: Record<string, string> }> {
  const [checkout, ...settings] = spec.split('|') as [string, ...string[]]
  const dir = mkdtempSync(join(work, 'c-'))
  const port = nextPort++
  const env = {
    ...Object.fromEntries(settings.map((s) => s.split('=', 2))),
    PATH: process.env.PATH ?? '',
    FLAGD_ADMIN_USERNAME: 'admin',
    FLAGD_ADMIN_PASSWORD: PASSWORD,
  }
  const args = [
    'taskset',
    '-c',
    '0',
    // a compiled binary runs as it is (to weigh build flags), a checkout from its source
    ...(statSync(checkout).isFile() ? [checkout] : [process.execPath, join(checkout, 'src/main.ts')]),
    'serve',
    '--port',
    String(port),
    '--data-dir',
    join(dir, 'data'),
  ]
  procs.push(Bun.spawn(args, { cwd: dir, env, stdout: Bun.file(join(dir, 'flagd.log')), stderr: 'inherit' }))
  const url = `http://127.0.0.1:${port}`
  await waitFor(`${url}/health`)
  const auth = await loginHeaders(url, 'admin', PASSWORD)
  const seeded = await fetch(`${url}/api/migrations`, { method: 'PUT', headers: auth, body: JSON.stringify(flagDocument(1000, 'app')) })
  if (seeded.status !== 200) throw new Error(`seeding ${spec} failed: ${seeded.status}`)
  // `|CONTEST_ROLLOUT=1`: the flag PATH names gets variants and a rollout half-way through a week;
  // `|CONTEST_ROLLOUT=rule`: the same variants and a plain rule instead (what a rollout is weighed against)
  if (env.CONTEST_ROLLOUT === '1' || env.CONTEST_ROLLOUT === 'rule') {
    const flag = PATH.replace(/^\/(ofrep\/v1\/evaluate\/flags|api\/flags)\//, '')
    const week = 7 * 86_400_000
    const rollout = {
      variant: 'b',
      start: new Date(Date.now() - week / 2).toISOString(),
      end: new Date(Date.now() + week / 2).toISOString(),
      fromPercent: 5,
      toPercent: 100,
    }
    const set = await fetch(`${url}/api/flags/${flag}`, {
      method: 'PUT',
      headers: auth,
      body: JSON.stringify(
        env.CONTEST_ROLLOUT === 'rule'
          ? { variants: { a: 1, b: 2 }, targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'a', 'b'] } }
          : { variants: { a: 1, b: 2 }, rollout },
      ),
    })
    if (set.status !== 200) throw new Error(`rollout on ${flag} failed: ${set.status} ${await set.text()}`)
  }
  const coding = env.CONTEST_ACCEPT_ENCODING ?? process.env.CONTEST_ACCEPT_ENCODING
  const accept: Record<string, string> = coding === undefined ? {} : { 'accept-encoding': coding }
  if (process.env.CONTEST_API_KEY !== '1') return { url, headers: { authorization: auth.authorization as string, ...accept } }
  const made = await fetch(`${url}/api/tokens`, {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ name: 'contest', permissions: ['flag:read'] }),
  })
  return { url, headers: { 'x-api-key': ((await made.json()) as { token: string }).token, ...accept } }
}

/** The contract's floor for PATH on CPU 0 (`/health`, or a flag read with the first contestant's credential). */
async function startFloor(bytesFile: string, first: { url: string; headers: Record<string, string> }, init: RequestInit) {
  const port = nextPort++
  const etag = (await fetch(first.url + PATH, init)).headers.get('etag')
  const command = BODY === undefined ? floorCommand(port, bytesFile, PATH, first.headers, etag) : undefined
  if (command === undefined) throw new Error('CONTEST_FLOOR knows /health and GET /api/flags/{name}')
  procs.push(Bun.spawn(['taskset', '-c', '0', ...command], { stdout: Bun.file(join(work, 'floor.log')), stderr: 'ignore' }))
  const url = `http://127.0.0.1:${port}`
  await waitFor(url + PATH, 10_000, first.headers)
  return [{ url, headers: first.headers }]
}

async function main(): Promise<void> {
  ensureWrk()
  const started = []
  for (const spec of contestants) started.push(await start(spec))
  const first = started[0] as { url: string; headers: Record<string, string> }
  const init =
    BODY === undefined
      ? { headers: first.headers }
      : { method: 'POST', headers: { ...first.headers, 'content-type': 'application/json' }, body: BODY }
  const bytesFile = join(work, 'answer')
  writeFileSync(bytesFile, await (await fetch(first.url + PATH, init)).bytes())
  const barePort = nextPort++
  procs.push(
    Bun.spawn(['taskset', '-c', '0', process.execPath, join(import.meta.dir, 'bare-server.ts'), String(barePort), bytesFile], {
      stdout: 'ignore',
      stderr: 'inherit',
    }),
  )
  await waitFor(`http://127.0.0.1:${barePort}/`)
  const floor = process.env.CONTEST_FLOOR === '1' ? await startFloor(bytesFile, first, init) : []
  if (process.env.CONTEST_IF_NONE_MATCH === '1')
    for (const s of started) {
      const asked = await fetch(s.url + PATH, { ...init, headers: { ...init.headers, ...s.headers } })
      const etag = asked.headers.get('etag')
      if (etag === null) throw new Error(`${s.url + PATH} has no ETag`)
      s.headers['if-none-match'] = etag
    }
  const script = join(work, 'request.lua')
  writeFileSync(
    script,
    BODY === undefined ? '' : `wrk.method = "POST"\nwrk.body = '${BODY}'\nwrk.headers["Content-Type"] = "application/json"\n`,
  )
  const targets = [...started, ...floor, { url: `http://127.0.0.1:${barePort}`, headers: {} }]
  const names = [...contestants, ...floor.map(() => 'contract floor'), 'bare Bun.serve']
  const rps: number[][] = targets.map(() => [])
  for (let round = 0; round < ROUNDS; round++) {
    const results = await pinnedRound(targets, PATH, script, SECONDS)
    results.forEach((r, i) => {
      if (r.non2xx > 0) console.log(`  ${names[i]}: ${r.non2xx} answers not 2xx/3xx`)
      rps[i]?.push(r.rps)
    })
    console.log(`round ${round + 1}: ${results.map((r, i) => `${names[i]} ${r.rps.toFixed(0)}`).join(', ')}`)
  }
  const bare = rps[rps.length - 1] as number[]
  const ratio = (a: number[], b: number[]) => spread(a.map((x, r) => x / (b[r] as number)))
  console.log(`\n${PATH}${BODY === undefined ? '' : ' (POST)'}, ${ROUNDS} rounds of ${SECONDS} s, one core shared:`)
  names.forEach((name, i) => {
    const own = rps[i] as number[]
    const vsBare = ratio(own, bare)
    const vsFirst = ratio(own, rps[0] as number[])
    console.log(
      `  ${name}: ${spread(own).median.toFixed(0)} req/s, ${vsBare.median.toFixed(3)} × bare (${vsBare.min.toFixed(3)}–${vsBare.max.toFixed(3)}), ${vsFirst.median.toFixed(3)} × the first (${vsFirst.min.toFixed(3)}–${vsFirst.max.toFixed(3)})`,
    )
  })
}

try {
  await main()
} finally {
  for (const p of procs) p.kill()
  // a stopping flagd still writes (its state file, its log): remove the directory once all have exited
  await Promise.all(procs.map((p) => p.exited))
  rmSync(work, { recursive: true, force: true })
}
