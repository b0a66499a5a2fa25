/**
 * `bun bench/idle-rss.ts [binary] [seconds]`: the compiled daemon's resident memory at idle
 * (docs/performance.md#idle-memory). Starts `binary` (default dist/flagd, `bun run build` makes it)
 * on an empty temp data directory with a first admin, waits until `/health` answers, lets it idle
 * `seconds` (default 10) and reads `VmRSS` (and its anonymous and file-backed parts) from
 * /proc/<pid>/status. Goal: < 60 MB.
 */

import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { freePort, type Row, startBinary } from './fixture.ts'

/** The resident memory of an idle daemon, in MB: in all, anonymous and file-backed (the binary's pages). */
export async function idleRss(binary: string, seconds = 10): Promise<{ rss: number; anon: number; file: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'flagd-idle-'))
  const { proc } = await startBinary(binary, dir, freePort())
  try {
    await Bun.sleep(seconds * 1000)
    const status = readFileSync(`/proc/${proc.pid}/status`, 'utf8')
    const mb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0) / 1024
    return { rss: mb('VmRSS'), anon: mb('RssAnon'), file: mb('RssFile') }
  } finally {
    proc.kill()
    await proc.exited
    rmSync(dir, { recursive: true, force: true })
  }
}

/** The bench's row. */
export async function idleRssRow(binary: string, row: Row): Promise<void> {
  const m = await idleRss(binary)
  row(
    'idle RSS 10 s after /health first answered (empty data dir, first admin made)',
    `${m.rss.toFixed(1)} MB (anonymous ${m.anon.toFixed(1)}, binary's pages ${m.file.toFixed(1)})`,
    '< 60 MB',
    m.rss < 60,
    m,
  )
}

if (import.meta.main) {
  const binary = process.argv[2] ?? join(import.meta.dir, '../dist/flagd')
  const m = await idleRss(binary, Number(process.argv[3] ?? 10))
  console.log(`idle RSS ${m.rss.toFixed(1)} MB (anonymous ${m.anon.toFixed(1)} MB, file-backed ${m.file.toFixed(1)} MB)`)
}
