/**
 * Backups written before an import changes anything: export files in `<dataDir>/backups/`, named
 * like exports (`-2`, `-3`, ... when the second is taken), written durably; only the newest
 * `keep` are kept.
 */

import { mkdir, readdir, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { writeFileAtomic } from '../io/atomic-write.ts'

/** The backup folder of a data directory. */
export function backupDir(dataDir: string): string {
  return join(dataDir, 'backups')
}

/** Writes `content` under `fileName` (made unique) and prunes old backups; returns the name used. */
export async function writeBackup(
  dataDir: string,
  fileName: string,
  content: string,
  keep = 50,
  writer: (path: string, text: string) => Promise<void> = writeFileAtomic,
): Promise<string> {
  const dir = backupDir(dataDir)
  await mkdir(dir, { recursive: true, mode: 0o700 })
  const existing = new Set(await readdir(dir))
  const stem = fileName.replace(/\.json$/, '')
  let name = fileName
  for (let n = 2; existing.has(name); n++) name = `${stem}-${n}.json`
  await writer(join(dir, name), content)
  await prune(dir, keep)
  return name
}

async function prune(dir: string, keep: number): Promise<void> {
  const names = (await readdir(dir)).filter((n) => n.endsWith('.json') && !n.includes('.tmp-'))
  if (names.length <= keep) return
  const dated = await Promise.all(names.map(async (n) => ({ n, t: (await stat(join(dir, n))).mtimeMs })))
  dated.sort((a, b) => a.t - b.t || (a.n < b.n ? -1 : 1))
  for (const { n } of dated.slice(0, dated.length - keep)) await rm(join(dir, n), { force: true })
}
