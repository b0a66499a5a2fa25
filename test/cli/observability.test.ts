/** Logs and metrics of a running daemon: the fields, the format, and what never appears. */

import { afterAll, afterEach, expect, setDefaultTimeout, test } from 'bun:test'
import { rmSync } from 'node:fs'
import { killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { tempDir } from '../helpers/test-app.ts'

setDefaultTimeout(30_000)
afterEach(killLiveDaemons) // a failed test leaves no daemon running
const dirs: string[] = []
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})
const dir = () => {
  const d = tempDir()
  dirs.push(d)
  return d
}
const PASSWORD = 'very-secret-password-42'

test('one JSON line per request with its fields; no password, token or secret in any line', async () => {
  const d = await startDaemon(dir(), [], { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: PASSWORD })
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  })
  const { token, user } = (await login.json()) as { token: string; user: { id: string } }
  await fetch(`${d.url}/api/flags?prefix=x`, { headers: { authorization: `Bearer ${token}`, 'x-request-id': 'trace-me-1' } })
  await fetch(`${d.url}/api/users`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'bob', password: 'bob-password-xyz' }),
  })
  const made = await fetch(`${d.url}/api/tokens`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'ci', permissions: ['flag:read'] }),
  })
  const apiToken = (await made.json()) as { token: string; id: string }
  await fetch(`${d.url}/api/flags`, { headers: { 'x-api-key': apiToken.token, 'x-request-id': 'trace-token-1' } })
  d.proc.kill('SIGTERM')
  expect(await d.proc.exited).toBe(0)
  const lines = d
    .output()
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l))
  const access = lines.filter((l) => l.msg === 'request')
  const traced = access.find((l) => l.requestId === 'trace-me-1')
  expect(traced).toMatchObject({ level: 30, method: 'GET', path: '/api/flags', status: 200, userId: user.id, service: 'flagd' })
  expect(typeof traced.durationMs).toBe('number')
  expect(new Date(traced.time).toISOString()).toBe(traced.time)
  expect(access.some((l) => l.path === '/api/login' && l.status === 200 && l.userId === undefined)).toBe(true)
  expect(access.find((l) => l.requestId === 'trace-token-1')).toMatchObject({ path: '/api/flags', status: 200, tokenId: apiToken.id })
  for (const secret of [PASSWORD, token, 'bob-password-xyz', token.split('.')[2] as string, 'argon2', apiToken.token.slice(4)])
    expect(d.output()).not.toContain(secret)
  expect(lines.some((l) => l.msg === 'stopped')).toBe(true)
})

// off with metrics.enabled=false: test/http/metrics-switch.test.ts (a setting, not the process, is the subject)
test('GET /metrics in Prometheus text', async () => {
  const d = await startDaemon(dir(), [], { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: PASSWORD })
  await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: 'wrong-password' }),
  })
  const login = await fetch(`${d.url}/api/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  })
  const { token } = (await login.json()) as { token: string }
  expect((await fetch(`${d.url}/api/flags`, { headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
  await fetch(`${d.url}/health`)
  await fetch(`${d.url}/api/flags/app/x`)
  await fetch(`${d.url}/api/users/usr_x`)
  const res = await fetch(`${d.url}/metrics`)
  expect(res.headers.get('content-type')).toStartWith('text/plain')
  const text = await res.text()
  for (const name of [
    'flagd_http_requests_total',
    'flagd_http_request_duration_seconds_bucket',
    'flagd_flags 0',
    'flagd_store_commit_duration_seconds',
    'flagd_store_commit_batch_size',
    'flagd_login_failures_total 1',
    'flagd_imports_total',
    'flagd_cache_bytes',
  ]) {
    expect(text).toContain(name)
  }
  // the session's credential (and the list it asked for) are kept
  expect(Number(/^flagd_cache_bytes (\d+)$/m.exec(text)?.[1])).toBeGreaterThan(0)
  expect(text).toContain('flagd_http_requests_total{method="POST",route="/api/login",status="401"} 1')
  // one style of route label: the OpenAPI document's, never the route table's '*' or ':id'
  const routes = [...text.matchAll(/route="([^"]+)"/g)].map((m) => m[1])
  expect(routes.some((r) => r?.includes('*') || r?.includes(':'))).toBe(false)
  expect(routes).toContain('/api/flags/{flagName}')
  expect(routes).toContain('/api/users/{userId}')
  d.proc.kill('SIGTERM')
  await d.proc.exited
})
