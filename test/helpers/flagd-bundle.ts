/**
 * flagd bundled into one file for the tests that spawn it (docs/development.md#what-the-tests-cost).
 * A spawn of `bun src/main.ts` loads a thousand modules, about 0.9 s of CPU for `serve`; the same
 * code bundled once with its bytecode starts in a fraction of that. The bundle is built at most once
 * per source: its directory under the temp dir is named after a hash of `src/`, `package.json`,
 * `bun.lock`, `tsconfig.json`, `bunfig.toml`, Bun's version and the build's options, so a changed source builds a new one and every
 * worker of a run (and every later run) finds the same. One worker builds it, in a temp directory
 * renamed into place, while the others wait: none ever sees half a bundle. Not the compiled
 * binary (`test/e2e/binary.test.ts` builds and tests that one): the same JavaScript Bun runs from
 * source, bundled.
 */

import { createHash } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const ROOT = join(import.meta.dir, '../..')
const ENTRY = join(ROOT, 'src/main.ts')
const PREFIX = 'flagd-test-bundle-'
/** A bundle not used for this long is removed by the next build (other checkouts keep theirs in use). */
const STALE_MS = 24 * 60 * 60 * 1000

/** The build's options; `--public-path` makes the paths of file imports (the API explorer's assets) absolute. */
function buildArgs(outdir: string, publicPath: string): string[] {
  return ['build', ENTRY, '--target=bun', '--bytecode', '--outdir', outdir, '--public-path', `${publicPath}/`]
}

/** A hash of what the bundle of the checkout at `root` is made of: every file under `src/`, the package, lock and build settings files, Bun itself. */
export function sourceHash(root = ROOT): string {
  const hash = createHash('sha256')
  hash.update(`${Bun.version} ${Bun.revision} ${buildArgs('', '').join(' ')}\n`)
  const files = readdirSync(join(root, 'src'), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort()
  const settings = ['package.json', 'bun.lock', 'tsconfig.json', 'bunfig.toml']
    .map((name) => join(root, name))
    .filter((file) => existsSync(file))
  for (const file of [...files, ...settings]) {
    hash.update(`${file.slice(root.length)}\0`)
    hash.update(readFileSync(file))
  }
  return hash.digest('hex').slice(0, 20)
}

/** Removes other bundles nobody has built or used for a day (see STALE_MS). */
function pruneStale(keep: string): void {
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith(PREFIX) || name.endsWith('.lock') || join(tmpdir(), name) === keep) continue
    const path = join(tmpdir(), name)
    try {
      if (Date.now() - statSync(path).mtimeMs > STALE_MS) rmSync(path, { recursive: true, force: true })
    } catch {
      // another worker removed it first
    }
  }
}

/** Whether the build that holds `lock` has gone: its process ended, or it never wrote its pid. */
function abandoned(lock: string): boolean {
  try {
    const pid = Number(readFileSync(lock, 'utf8'))
    if (!pid) return Date.now() - statSync(lock).mtimeMs > 10_000
    process.kill(pid, 0) // throws when no such process
    return false
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH'
  }
}

/** Runs `bun build` into a staging directory and renames it to `dir`. */
async function buildInto(dir: string): Promise<void> {
  const staging = mkdtempSync(join(tmpdir(), `${PREFIX}building-`))
  try {
    const proc = Bun.spawn([process.execPath, ...buildArgs(staging, dir)], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe' })
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited])
    if (code !== 0) throw new Error(`bundling flagd for the tests failed (${code}): ${out}${err}`)
    renameSync(staging, dir)
  } finally {
    rmSync(staging, { recursive: true, force: true })
  }
}

/**
 * Builds the bundle into `dir` unless it is there (see module comment). One process builds, under a
 * lock file holding its pid; the others wait for the bundle, or take over the lock of a build that died.
 */
async function build(dir: string): Promise<void> {
  const main = join(dir, 'main.js')
  const lock = `${dir}.lock`
  for (;;) {
    if (existsSync(main)) {
      const now = new Date()
      utimesSync(dir, now, now) // in use: not stale for another checkout's prune
      return
    }
    try {
      writeFileSync(lock, String(process.pid), { flag: 'wx' })
      break
    } catch {
      if (abandoned(lock)) rmSync(lock, { force: true })
      else await Bun.sleep(100) // another worker is building: no event reaches this process when it is done
    }
  }
  try {
    if (!existsSync(main)) await buildInto(dir)
  } finally {
    rmSync(lock, { force: true })
  }
  pruneStale(dir)
}

let bundled: Promise<string> | undefined

/** The path of the bundled `main.js`, built on first use in this process (see module comment). */
export function flagdBundle(): Promise<string> {
  bundled ??= (async () => {
    const dir = join(tmpdir(), `${PREFIX}${sourceHash()}`)
    await build(dir)
    return join(dir, 'main.js')
  })()
  return bundled
}
