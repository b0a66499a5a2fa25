/**
 * The rollout-size row of `bun run bench` (docs/performance.md): what one flag under a 100-step
 * progressive rollout adds to the sync document (compact JSON, as the gRPC sync sends it) and to
 * the flagd export file, beside the same flag without one, by targetingKey, by another attribute,
 * and with the bench's five-condition rule behind it. Over HTTP only, so it measures any build:
 * `bun bench/rollout-bytes.ts <url> <username> <password>` against a running daemon (the previous
 * build included) prints the same figures.
 */

import { BENCH_RULE, BENCH_SEGMENT } from './targeting.ts'

type Row = (scenario: string, result: string, goal: string, met: boolean, raw: unknown) => void

/** Bytes a flag adds to the sync document and to the export file, for each kind of flag. */
export async function rolloutBytes(url: string, auth: Record<string, string>): Promise<Record<string, { sync: number; file: number }>> {
  const now = Date.now()
  const rollout = {
    variant: 'on',
    start: new Date(now - 3.5 * 86_400_000).toISOString(),
    end: new Date(now + 3.5 * 86_400_000).toISOString(),
    fromPercent: 5,
    toPercent: 100,
  }
  const kinds: Record<string, Record<string, unknown>> = {
    'no rollout': {},
    rollout: { rollout },
    'rollout by account': { rollout: { ...rollout, by: 'account', fromPercent: 10, toPercent: 90 } },
    'rule and rollout': { targeting: BENCH_RULE, rollout },
  }
  const segment = await fetch(`${url}/api/segments/bench-testers`, {
    method: 'PUT',
    headers: auth,
    body: JSON.stringify({ rule: BENCH_SEGMENT }),
  })
  if (!segment.ok) throw new Error(`segment: ${segment.status} ${await segment.text()}`)
  const exported = async () => {
    const res = await fetch(`${url}/api/migrations/export?format=flagd`, { headers: auth })
    if (!res.ok) throw new Error(`export: ${res.status} ${await res.text()}`)
    return res.text()
  }
  const out: Record<string, { sync: number; file: number }> = {}
  for (const [i, [kind, extra]] of Object.entries(kinds).entries()) {
    const name = `bench/rollout-bytes/k${i}-${now}`
    const before = Buffer.byteLength(await exported())
    const made = await fetch(`${url}/api/flags`, {
      method: 'POST',
      headers: auth,
      body: JSON.stringify({ name, type: 'BOOLEAN', value: false, variants: { on: true, off: false }, ...extra }),
    })
    if (made.status !== 201) throw new Error(`flag: ${made.status} ${await made.text()}`)
    const text = await exported()
    const flag = (JSON.parse(text) as { flags: Record<string, unknown> }).flags[name]
    // the sync document is the same document as compact JSON: the flag's entry, its name and separators
    out[kind] = { sync: Buffer.byteLength(`,${JSON.stringify(name)}:${JSON.stringify(flag)}`), file: Buffer.byteLength(text) - before }
    await fetch(`${url}/api/flags/${name}`, { method: 'DELETE', headers: auth })
  }
  return out
}

/** The row: bytes per flag under a rollout in the sync document and the export file (goal ≤ 2 KB). */
export async function rolloutBytesRow(url: string, auth: Record<string, string>, row: Row): Promise<void> {
  const bytes = await rolloutBytes(url, auth)
  const worst = Math.max(
    bytes.rollout?.sync ?? 0,
    bytes['rollout by account']?.sync ?? 0,
    bytes.rollout?.file ?? 0,
    bytes['rollout by account']?.file ?? 0,
  )
  row(
    'A flag under a rollout (100 steps) in the sync document / flagd export file',
    Object.entries(bytes)
      .map(([kind, b]) => `${kind} ${b.sync} B / ${b.file} B`)
      .join('; '),
    '≤ 2 KB',
    worst <= 2048,
    bytes,
  )
}

if (import.meta.main) {
  const [url, username, password] = process.argv.slice(2)
  if (!url || !username || !password) throw new Error('usage: bun bench/rollout-bytes.ts <url> <username> <password>')
  const { loginHeaders } = await import('./fixture.ts')
  const bytes = await rolloutBytes(url, await loginHeaders(url, username, password))
  for (const [kind, b] of Object.entries(bytes)) console.log(`${kind}: sync ${b.sync} B, export file ${b.file} B`)
}
