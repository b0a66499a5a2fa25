/**
 * flagd bundled into one file for the tests that spawn it (docs/development.md#what-the-tests-cost).
 * A spawn of `bun src/main.ts` loads a thousand modules, about 0.9 s of CPU for `serve`; the same
 * code bundled once with its bytecode starts in a fraction of that. The bundle is built at most once
 * per source: its directory under the temp dir is named after a hash of `src/`, `package.json`,
 * `bun.lock`, `tsconfig.json`, `bunfig.toml`, Bun's version and the build's options, so a changed source builds a new one and every
 * worker of a run (and every later run) finds the same. One worker builds it, in a temp directory
 * renamed into place, under a kernel file lock the others block on: none ever sees half a bundle. Not the compiled
 * binary (`test/e2e/binary.test.ts` builds and tests that one): the same JavaScript Bun runs from
 * source, bundled.
 */

import { dlopen, FFIType } from 'bun:ffi'
import { createHash } from 'node:crypto'
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
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

/** The file in a bundle's directory whose modification time, set by the kernel on each use, says when it was last used. */
const USED = 'last-used'

/** Marks `dir` as in use now, by the file system's clock: not stale for another checkout's prune. */
function markUsed(dir: string): void {
  writeFileSync(join(dir, USED), '')
}

/**
 * Removes the other bundles not used for a day before `keep` was (see STALE_MS). Times are the
 * file system's: the mtimes of their `last-used` files against the one `markUsed` just wrote.
 */
function pruneStale(keep: string): void {
  const now = statSync(join(keep, USED)).mtimeMs
  for (const name of readdirSync(tmpdir())) {
    const path = join(tmpdir(), name)
    if (!name.startsWith(PREFIX) || name.endsWith('.lock') || path === keep) continue
    try {
      // the newer of the two: a checkout from before `last-used` marks use on the directory itself
      const marked = existsSync(join(path, USED)) ? statSync(join(path, USED)).mtimeMs : 0
      if (now - Math.max(marked, statSync(path).mtimeMs) <= STALE_MS) continue
      rmSync(path, { recursive: true, force: true })
      rmSync(`${path}.lock`, { force: true })
    } catch {
      // another worker removed it first
    }
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

const LOCK_EX = 2

/** libc's `flock(2)`: a lock the kernel releases when its file is closed or its process ends. */
const libc = dlopen(process.platform === 'darwin' ? 'libc.dylib' : 'libc.so.6', {
  flock: { args: [FFIType.i32, FFIType.i32], returns: FFIType.i32 },
})

/**
 * Takes the exclusive lock on `file`, waiting (blocked in the kernel, no polling) while another
 * process holds it; closing the answered descriptor releases it. A holder that dies releases it too.
 */
function lockFile(file: string): number {
  const fd = openSync(file, 'a')
  for (let attempt = 0; attempt < 10; attempt++) {
    if (libc.symbols.flock(fd, LOCK_EX) === 0) return fd // a signal may interrupt the wait: ask again
  }
  closeSync(fd)
  throw new Error(`could not lock ${file} for the tests' bundle`)
}

/**
 * Builds the bundle into `dir` unless it is there (see module comment). One process builds, holding
 * the lock on `<dir>.lock`; the others wait on that lock and then find the bundle it renamed into place.
 */
async function build(dir: string): Promise<void> {
  const main = join(dir, 'main.js')
  let built = false
  if (!existsSync(main)) {
    const fd = lockFile(`${dir}.lock`)
    try {
      if (!existsSync(main)) {
        await buildInto(dir)
        built = true
      }
    } finally {
      closeSync(fd)
    }
  }
  markUsed(dir)
  if (built) pruneStale(dir)
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
