/**
 * The data directory's single-writer lock: the kernel's flock where the C library has it (Linux in
 * CI), and the pid-file fallback for systems where it cannot be loaded, each excluding a second
 * holder, in this process and in another one.
 */

import { afterEach, describe, expect, test } from 'bun:test'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { acquireDirLock, DirectoryInUseError, libcNames, loadFlock, pidLockPath } from '../../src/storage/file-lock.ts'
import { tempDir } from '../helpers/test-app.ts'

const dirs: string[] = []
const newDir = () => {
  const dir = tempDir('flagd-lock-')
  dirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true })
})

/** Runs a child Bun process that tries to take the lock on `dir` and prints what happened. */
async function lockFromAnotherProcess(dir: string, fallback: boolean): Promise<string> {
  const script = `
    import { acquireDirLock } from ${JSON.stringify(`${import.meta.dir}/../../src/storage/file-lock.ts`)}
    try { acquireDirLock(${JSON.stringify(dir)}${fallback ? ', { flock: null }' : ''}); console.log('acquired') }
    catch (err) { console.log(err.name + ': ' + err.message) }
  `
  const child = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'inherit' })
  const out = await new Response(child.stdout).text()
  await child.exited
  return out.trim()
}

describe('the C library is found under its name on each system', () => {
  test('names per platform', () => {
    expect(libcNames('darwin', 'arm64')[0]).toBe('/usr/lib/libSystem.B.dylib')
    expect(libcNames('linux', 'x64')).toContain('libc.so.6')
    expect(libcNames('linux', 'arm64')).toContain('libc.musl-aarch64.so.1')
    expect(libcNames('freebsd', 'x64')).toContain('libc.so.7')
  })

  test('no C library under any of the names: no flock, and the lock falls back', () => {
    expect(loadFlock(['libdoes-not-exist.so.99'])).toBeNull()
  })

  test.if(process.platform === 'linux')('Linux loads flock', () => {
    expect(loadFlock()).not.toBeNull()
  })
})

describe('flock', () => {
  test.if(process.platform === 'linux')('a second holder is refused, in this process and in another, until release', async () => {
    const dir = newDir()
    const lock = acquireDirLock(dir)
    expect(lock.kind).toBe('flock')
    expect(() => acquireDirLock(dir)).toThrow(DirectoryInUseError)
    expect(await lockFromAnotherProcess(dir, false)).toContain(
      `DirectoryInUseError: data directory ${dir} is in use by another flagd process (pid ${process.pid})`,
    )
    lock.release()
    lock.release() // idempotent
    expect(await lockFromAnotherProcess(dir, false)).toBe('acquired') // and the child's lock died with it
  })
})

describe('the pid-file fallback', () => {
  test('a second holder is refused, in this process and in another, until release', async () => {
    const dir = newDir()
    const lock = acquireDirLock(dir, { flock: null })
    expect(lock.kind).toBe('pid-file')
    expect(readFileSync(pidLockPath(dir), 'utf8').trim()).toBe(String(process.pid))
    expect(() => acquireDirLock(dir, { flock: null })).toThrow(DirectoryInUseError)
    expect(await lockFromAnotherProcess(dir, true)).toContain(`(pid ${process.pid})`)
    lock.release()
    expect(existsSync(pidLockPath(dir))).toBe(false)
    lock.release()
    const again = acquireDirLock(dir, { flock: null })
    again.release()
  })

  test('a file left by a holder that died (kill -9) is taken over', async () => {
    const dir = newDir()
    const child = Bun.spawn([process.execPath, '-e', 'process.exit(0)'])
    await child.exited // a pid that is no longer a live process
    writeFileSync(pidLockPath(dir), `${child.pid}\n`)
    const lock = acquireDirLock(dir, { flock: null })
    expect(readFileSync(pidLockPath(dir), 'utf8').trim()).toBe(String(process.pid))
    lock.release()
  })

  test('a garbled file (no pid) is taken over; no temp file is left behind', () => {
    const dir = newDir()
    writeFileSync(pidLockPath(dir), '')
    const lock = acquireDirLock(dir, { flock: null })
    lock.release()
    expect(existsSync(`${pidLockPath(dir)}.${process.pid}.tmp`)).toBe(false)
  })

  test("another process's lock file, while it lives, is not taken over", async () => {
    const dir = newDir()
    const holder = Bun.spawn([process.execPath, '-e', 'await Bun.sleep(60_000)'])
    try {
      writeFileSync(pidLockPath(dir), `${holder.pid}\n`)
      let error: unknown
      try {
        acquireDirLock(dir, { flock: null })
      } catch (err) {
        error = err
      }
      expect(error).toBeInstanceOf(DirectoryInUseError)
      expect((error as DirectoryInUseError).holderPid).toBe(holder.pid)
    } finally {
      holder.kill()
      await holder.exited
    }
  })
})
