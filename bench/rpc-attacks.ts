/**
 * The attacks of one unauthenticated client on the evaluation and sync ports in `bun run bench`
 * (docs/performance.md, 2026-12-07): each attack of test/helpers/rpc-attacks.ts against a fresh
 * daemon's ports, a row each with what the attacker saw, the daemon's resident memory before and
 * at its peak, and the slowest `/health` meanwhile, asked by a process of its own (the attacker's
 * own work must not count against the daemon). Goals: the contract's, +300 MB and 3 s.
 */

import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import * as attacks from '../test/helpers/rpc-attacks.ts'
import { freePort, loginHeaders, type Row, startBinary } from './fixture.ts'
import { token as evaluateToken } from './ofrep.ts'

const mb = (pid: number, field: string) =>
  Number(new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024

// asks /health every 20 ms and prints each latency (ms) until its stdin closes
const PROBER = `
const url = process.argv[1]
let open = true
process.stdin.on('end', () => { open = false }); process.stdin.resume()
while (open) {
  const t = performance.now()
  await fetch(url).then((r) => r.arrayBuffer(), () => {})
  console.log((performance.now() - t).toFixed(1))
  await Bun.sleep(20)
}
process.exit(0)
`

/** The streams' outcome once the attacker has held them until measured, then left. */
async function heldThenLeft(held: Promise<attacks.WithheldStreams>) {
  const { leave, ...outcome } = await held
  leave()
  return outcome
}

/** The rows (see module comment). */
export async function rpcAttackRows(binary: string, work: string, row: Row): Promise<void> {
  const dir = mkdtempSync(join(work, 'rpc-attacks-'))
  const [port, rpcPort, syncPort] = [freePort(), freePort(), freePort()]
  const { proc, url } = await startBinary(binary, dir, port, { FLAGD_EVALUATION_PORT: String(rpcPort), FLAGD_SYNC_PORT: String(syncPort) })
  try {
    const auth = await loginHeaders(url, 'admin', 'bench-password')
    const target = { rpcPort, syncPort, token: await evaluateToken({ url, auth }, 'attacks') }
    attacks.gzipBombMessage() // the attacker's own work, before anything is measured
    // a flagd document of about 3 MB, for the streams that grant no window: each would hold one
    // (made before those rows, so that their memory does not count the import)
    const large = async () => {
      const seeded = await fetch(`${url}/api/migrations`, {
        method: 'PUT',
        headers: auth,
        body: JSON.stringify(attacks.largeSyncDocument(new Date().toISOString())),
      })
      if (seeded.status !== 200) throw new Error(`seeding failed: ${seeded.status}`)
    }
    const runs: [string, (t: attacks.AttackTarget) => Promise<unknown>, (() => Promise<void>)?][] = [
      ['a 64 kB HPACK block decoding to 240 MB', attacks.hpackBomb],
      ['200,000 empty CONTINUATION frames', attacks.emptyContinuationFlood],
      ['4 MB of tiny calls, answers never read', attacks.unreadAnswers],
      ['a gzip message inflating to 64 MiB (gRPC and Connect)', attacks.gzipBomb],
      ['bodies past the flow-control window, 100 streams', attacks.bodiesPastTheWindow],
      ['1,000,000 PINGs, acknowledgements never read', attacks.pingFlood],
      ['HTTP/1.1 requests that are no Connect call', attacks.http1Probes],
      ['HTTP/2 protocol violations (10 kinds, a connection each)', attacks.protocolViolations],
      ['1,000 SyncFlags streams of one token, never read (grpc-js, paused)', attacks.unreadSyncStreams],
      [
        '1,000 SyncFlags streams of one token granting no window (document 3 MB), one connection',
        (t) => heldThenLeft(attacks.withheldSyncStreams(t, 1, 1000)),
        large,
      ],
      [
        '1,000 SyncFlags streams of one token granting no window (document 3 MB), 20 on each of 50 connections',
        (t) => heldThenLeft(attacks.withheldSyncStreams(t, 50, 20)),
      ],
    ]
    for (const [name, attack, prepare] of runs) {
      await prepare?.()
      writeFileSync(`/proc/${proc.pid}/clear_refs`, '5')
      const before = mb(proc.pid, 'VmRSS')
      const prober = Bun.spawn([process.execPath, '-e', PROBER, `${url}/health`], { stdin: 'pipe', stdout: 'pipe' })
      // the attack begins once the prober has asked once (its start is slower than some attacks)
      const reader = prober.stdout.getReader()
      let text = ''
      while (!text.includes('\n')) {
        const { done, value } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
      }
      const outcome = await attack(target)
      // and one more answer after it (an attack may end before the prober's next turn)
      const asked = text.split('\n').length
      while (text.split('\n').length <= asked) {
        const { done, value } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
      }
      prober.stdin.end()
      for (;;) {
        const { done, value } = await reader.read()
        if (done) break
        text += new TextDecoder().decode(value)
      }
      const latencies = text.trim().split('\n').slice(1).map(Number)
      const worst = Math.max(0, ...latencies.filter(Number.isFinite))
      const peak = mb(proc.pid, 'VmHWM')
      const alive = proc.exitCode === null
      const seen = JSON.stringify(outcome).slice(0, 160)
      row(
        `RPC attack: ${name}`,
        `${alive ? '' : 'DAEMON DIED; '}RSS ${before.toFixed(0)} → peak ${peak.toFixed(0)} MB, slowest /health ${worst.toFixed(0)} ms (${latencies.length} asked); attacker saw ${seen}`,
        '< +300 MB, /health < 3 s',
        alive && peak - before < 300 && worst < 3000,
        { outcome, before, peak, worstHealthMs: worst },
      )
    }
  } finally {
    proc.kill()
    await proc.exited
  }
}
