/**
 * File moves of the drop folder: where a processed or failed file goes (`<UTC YYYYMMDD-HHMMSS>_<name>`,
 * `-2`, `-3`, ... when taken) and the report written beside it. A dropped file is moved, never deleted.
 */

import { mkdir, rename, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { utcStamp } from '../domain/utc-stamp.ts'
import { writeFileAtomic } from '../io/atomic-write.ts'

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path)
    return true
  } catch {
    return false
  }
}

/** Creates `processed/` and `failed/` under the drop folder. */
export async function prepareDropFolder(watchDir: string): Promise<void> {
  await mkdir(join(watchDir, 'processed'), { recursive: true })
  await mkdir(join(watchDir, 'failed'), { recursive: true })
}

/**
 * Moves `name` into `<watchDir>/<outcome>/` under a stamped, unused name (the link itself for a
 * symbolic link), then writes `report` beside it as `<that name>.<suffix>`. Returns the new name.
 */
export async function moveWithReport(watchDir: string, name: string, outcome: 'processed' | 'failed', at: Date, suffix: string, report: unknown): Promise<string> {
  const dir = join(watchDir, outcome)
  const base = `${utcStamp(at)}_${name}`
  const dot = base.lastIndexOf('.')
  const [stem, ext] = dot > 0 ? [base.slice(0, dot), base.slice(dot)] : [base, '']
  let target = base
  for (let n = 2; (await exists(join(dir, target))) || (await exists(join(dir, `${target}.${suffix}`))); n++) target = `${stem}-${n}${ext}`
  await rename(join(watchDir, name), join(dir, target))
  await writeFileAtomic(join(dir, `${target}.${suffix}`), `${JSON.stringify(report, null, 2)}\n`)
  return target
}
