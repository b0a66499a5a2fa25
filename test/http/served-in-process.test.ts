/**
 * `lastServedInProcessAt` (docs/openfeature.md#in-process-usage) over a real sync stream: set only for
 * the flags the document carried (a TAG flag, left out of it, never), only in the stream's
 * environment, "now" only while the stream is open; a provider that leaves stops holding at once.
 * Flags answered over RPC count as served too.
 */

import { afterEach, expect, test } from 'bun:test'
import { credentials, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js'
import { evaluationMethod } from '../../src/sync/evaluation-protocol.ts'
import type { EvaluationRpcServer } from '../../src/sync/evaluation-server.ts'
import { FLAG_SYNC_SERVICE } from '../../src/sync/sync-protocol.ts'
import type { SyncServer } from '../../src/sync/sync-server.ts'
import { eventually } from '../helpers/eventually.ts'
import { serveEvaluation } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
const servers: SyncServer[] = []
const rpcs: EvaluationRpcServer[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) await s.close()
  for (const r of rpcs.splice(0)) await r.close()
  for (const a of apps) await a.close()
  apps = []
})

const Client = makeGenericClientConstructor(FLAG_SYNC_SERVICE, 'FlagSyncService')

test('only flags the document carried, in its environment, and no longer "now" once the provider left', async () => {
  let now = Date.now()
  const a = await createTestApp({ FLAGD_SYNC_PORT: '0' }, { now: () => new Date(now) })
  apps.push(a)
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  for (const body of [
    { name: 'app/dark', type: 'BOOLEAN', value: true },
    { name: 'app/tags', type: 'TAG', enumValues: ['a', 'b'], value: ['a'] },
  ])
    expect((await admin('POST', '/api/flags', body)).status).toBe(201)
  expect((await admin('PUT', '/api/environments/staging', {})).status).toBe(201)
  const token = (await admin('POST', '/api/tokens', { name: 'svc', permissions: ['flag:evaluate'], environment: 'staging' })).body.token
  const server = (await a.app.sync.start()) as SyncServer
  servers.push(server)

  const client = new Client(`127.0.0.1:${server.port}`, credentials.createInsecure()) as unknown as {
    syncFlags(r: object): { on(e: string, f: (x: never) => void): void; cancel(): void }
    close(): void
  }
  const stream = client.syncFlags({ providerId: '', selector: `token=${token}` })
  stream.on('error', (_e: ServiceError) => {})
  const document = await new Promise<string>((resolve) =>
    stream.on('data', (m: { flagConfiguration: string }) => resolve(m.flagConfiguration)),
  )
  expect(Object.keys(JSON.parse(document).flags)).toEqual(['app/dark']) // TAG flags have no flagd type

  const served = async (env: string) =>
    Object.fromEntries(
      ((await admin('GET', `/api/usage?environment=${env}`)).body as { name: string; lastServedInProcessAt: string | null }[]).map((u) => [
        u.name,
        u.lastServedInProcessAt,
      ]),
    )
  const openAt = new Date(now).toISOString()
  expect(await served('staging')).toEqual({ 'app/dark': openAt, 'app/tags': null })
  expect(await served('development')).toEqual({ 'app/dark': null, 'app/tags': null }) // not served there
  const held = async () => (await admin('GET', '/api/flags/app/dark/usage?environment=staging')).body.heldInProcess
  expect(await held()).toBe(true)

  // the provider leaves: its flags were held until then, not a moment longer
  const leftAt = (now += 60_000)
  stream.cancel()
  client.close()
  await eventually(() => server.streamCount() === 0, { what: () => `${server.streamCount()} streams still open` }) // no event announces a stream's end
  now += 60_000
  expect(await served('staging')).toEqual({ 'app/dark': new Date(leftAt).toISOString(), 'app/tags': null })
  expect(await held()).toBe(false) // not "now" for a moment longer
})

test('RPC: the flags answered count as served (ResolveAll leaves TAG flags out, so they do not)', async () => {
  let now = Date.now()
  const a = await createTestApp({ FLAGD_EVALUATION_PORT: '0', FLAGD_EVALUATION_ANONYMOUS: 'true' }, { now: () => new Date(now) })
  apps.push(a)
  const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
  for (const body of [
    { name: 'app/dark', type: 'BOOLEAN', value: true },
    { name: 'app/size', type: 'INTEGER', value: 3 },
    { name: 'app/tags', type: 'TAG', enumValues: ['a', 'b'], value: ['a'] },
  ])
    expect((await admin('POST', '/api/flags', body)).status).toBe(201)
  const rpc = await serveEvaluation(a)
  rpcs.push(rpc)
  const call = async (method: string, version: 'v1' | 'v2', body: object) => {
    const res = await fetch(`http://127.0.0.1:${rpc.port}${evaluationMethod(version, method).path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1' },
      body: JSON.stringify(body),
    })
    return { status: res.status, body: (await res.json()) as Record<string, unknown> }
  }
  const served = async () =>
    Object.fromEntries(
      ((await admin('GET', '/api/usage')).body as { name: string; lastServedInProcessAt: string | null }[]).map((u) => [
        u.name,
        u.lastServedInProcessAt,
      ]),
    )
  const all = await call('ResolveAll', 'v1', { context: {} })
  expect(all.status).toBe(200)
  expect(Object.keys(all.body.flags as object).sort()).toEqual(['app/dark', 'app/size'])
  const firstAt = new Date(now).toISOString()
  expect(await served()).toEqual({ 'app/dark': firstAt, 'app/size': firstAt, 'app/tags': null })
  now += 1000
  expect((await call('ResolveInt', 'v2', { flagKey: 'app/size' })).status).toBe(200)
  expect((await call('ResolveBoolean', 'v2', { flagKey: 'app/tags' })).status).toBe(400) // no resolver serves a TAG
  expect(await served()).toEqual({ 'app/dark': firstAt, 'app/size': new Date(now).toISOString(), 'app/tags': null })
})
