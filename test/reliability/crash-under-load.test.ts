/**
 * Crash: the daemon, under concurrent HTTP writes, is killed with SIGKILL at random
 * moments, many times. After each kill the state (the state file and its change journal) reads back,
 * every write that was answered 2xx is present, and the restarted daemon leaves no temp file.
 */

import { afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { readdirSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import { killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { readStateFile } from '../helpers/state-file.ts'
import { tempDir } from '../helpers/test-app.ts'

// 6 rounds by default keep `bun test` quick (each is a daemon start, about a second of CPU); .ci/run
// sets TEST_FULL_RELIABILITY for the full 100.
const ROUNDS = Number(process.env.CRASH_HTTP_ROUNDS ?? (process.env.TEST_FULL_RELIABILITY ? 100 : 6))
const WRITERS = 16
setDefaultTimeout(600_000)
afterEach(killLiveDaemons) // a failed test leaves no daemon running

test(`acknowledged writes survive ${ROUNDS} SIGKILLs under ${WRITERS} concurrent writers`, async () => {
  const cwd = tempDir()
  const env = { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: 'admin-password' }
  const acked = new Map<string, number>()
  let token = ''
  let totalAcked = 0
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const d = await startDaemon(cwd, [], env)
      expect(readdirSync(join(cwd, 'data')).filter((n) => n.includes('.tmp-'))).toEqual([])
      const call = (method: string, path: string, body?: unknown) =>
        fetch(`${d.url}${path}`, {
          method,
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: body === undefined ? undefined : JSON.stringify(body),
        })
      if (round === 0) {
        const login = await fetch(`${d.url}/api/login`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ username: 'admin', password: 'admin-password' }),
        })
        token = ((await login.json()) as { token: string }).token
        for (let w = 0; w < WRITERS; w++)
          expect((await call('POST', '/api/flags', { name: `crash/w${w}`, type: 'INTEGER' })).status).toBe(201)
      }
      let stop = false
      const writer = async (w: number) => {
        let value = (acked.get(`crash/w${w}`) ?? 0) + 1
        while (!stop) {
          try {
            const res = await call('PUT', `/api/flags/crash/w${w}`, { value })
            if (res.status === 200) {
              acked.set(`crash/w${w}`, value)
              totalAcked++
            }
            await res.arrayBuffer()
          } catch {
            return // the daemon died mid-request: that write was never acknowledged
          }
          value++
        }
      }
      const writers = Array.from({ length: WRITERS }, (_, w) => writer(w))
      await Bun.sleep(30 + Math.random() * 200)
      d.proc.kill('SIGKILL')
      await d.proc.exited
      stop = true
      await Promise.all(writers)
      const state = readStateFile(join(cwd, 'data', 'flagd.json'))
      for (const [name, value] of acked) {
        const flag = state.flags.get(name)
        expect(flag?.states.development?.value as number, `${name} after round ${round}`).toBeGreaterThanOrEqual(value)
      }
    }
    expect(totalAcked).toBeGreaterThan(ROUNDS)
  } finally {
    rmSync(cwd, { recursive: true, force: true })
  }
})
