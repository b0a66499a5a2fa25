/**
 * The evaluation port over HTTP/1.1 speaks the Connect protocol, as OpenFeature's flagd does: what
 * the Go flagd provider sends in its default RPC mode (connect-go, binary messages: plain POSTs,
 * and an enveloped EventStream), and the official flagd web provider (connect-web, JSON) evaluating
 * through ResolveAll and told of changes by its event stream. Same answers, credentials and
 * environment as gRPC (docs/openfeature.md#rpc).
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import type { Interceptor } from '@connectrpc/connect'
import { FlagdWebProvider } from '@openfeature/flagd-web-provider'
import { OpenFeature, ProviderEvents } from '@openfeature/web-sdk'
import { evaluationMethod } from '../../src/sync/evaluation-protocol.ts'
import { freePort } from '../helpers/daemon.ts'
import { type AdminDaemon, daemonForFile } from '../helpers/test-daemon.ts'
import { testkitFlags } from '../helpers/testkit.ts'

setDefaultTimeout(30_000)

const port = freePort()
const rpc = `http://127.0.0.1:${port}`
const daemon = daemonForFile({ FLAGD_EVALUATION_PORT: String(port), FLAGD_CORS_ORIGINS: 'http://shop.example' })
let d: AdminDaemon
let token: string
const api = (method: string, path: string, body?: unknown) => d.api(method, path, body)

beforeAll(async () => {
  d = daemon()
  expect((await api('PUT', '/api/migrations', testkitFlags())).status).toBe(200)
  token = await d.token('connect', ['flag:evaluate'])
})
afterAll(async () => {
  await OpenFeature.close()
})

const call = (path: string, type: string, body: string | Uint8Array, auth: string | null = token) =>
  fetch(`${rpc}${path}`, {
    method: 'POST',
    headers: { 'content-type': type, 'connect-protocol-version': '1', ...(auth ? { authorization: `Bearer ${auth}` } : {}) },
    body,
  })

test("connect-go's unary calls: binary messages as plain POSTs, errors as HTTP statuses with Connect's JSON", async () => {
  for (const version of ['v1', 'v2'] as const) {
    const m = evaluationMethod(version, 'ResolveBoolean')
    const res = await call(m.path, 'application/proto', m.encodeRequest({ flagKey: 'boolean-flag', context: { fields: {} } }))
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toBe('application/proto')
    expect(m.decodeResponse(new Uint8Array(await res.arrayBuffer()))).toMatchObject({ value: true, variant: 'on', reason: 'STATIC' })
  }
  const m = evaluationMethod('v2', 'ResolveBoolean')
  const missing = await call(m.path, 'application/proto', m.encodeRequest({ flagKey: 'no-such-flag' }))
  expect(missing.status).toBe(404)
  expect(await missing.json()).toEqual({ code: 'not_found', message: 'no flag named "no-such-flag"' })
  const anonymous = await call(m.path, 'application/proto', m.encodeRequest({ flagKey: 'boolean-flag' }), null)
  expect(anonymous.status).toBe(401)
  expect(((await anonymous.json()) as { code: string }).code).toBe('unauthenticated')
  const mismatch = await call(m.path, 'application/proto', m.encodeRequest({ flagKey: 'string-flag' }))
  expect(mismatch.status).toBe(400)
  expect(((await mismatch.json()) as { code: string }).code).toBe('invalid_argument')
  const garbage = await call(m.path, 'application/proto', Uint8Array.of(0xff, 0xff, 0xff))
  expect(garbage.status).toBe(400)
  const grpc = await call(m.path, 'application/grpc', Uint8Array.of(0, 0, 0, 0, 0))
  expect(grpc.status).toBe(415)
  expect(await grpc.text()).toContain('gRPC needs HTTP/2')
})

test("JSON messages (protobuf's JSON mapping): an int64 as a string, ResolveAll's values by their kind", async () => {
  const int = await call(evaluationMethod('v2', 'ResolveInt').path, 'application/json', JSON.stringify({ flagKey: 'integer-flag' }))
  expect(int.status).toBe(200)
  expect(await int.json()).toMatchObject({ value: '10', variant: 'ten', reason: 'STATIC' })
  const all = await call(evaluationMethod('v1', 'ResolveAll').path, 'application/json', JSON.stringify({ context: {} }))
  const flags = ((await all.json()) as { flags: Record<string, Record<string, unknown>> }).flags
  expect(flags['boolean-flag']).toMatchObject({ boolValue: true, variant: 'on', reason: 'STATIC' })
  expect(flags['object-flag']).toMatchObject({ objectValue: { showImages: true, title: 'Check out these pics!', imagesPerPage: 100 } })
  const bad = await call(evaluationMethod('v2', 'ResolveInt').path, 'application/json', JSON.stringify({ flagKey: 5 }))
  expect(bad.status).toBe(400)
  expect(((await bad.json()) as { message: string }).message).toContain('flagKey: string expected')
})

test("connect-go's EventStream: enveloped messages, provider_ready at once, a change named by its key", async () => {
  const m = evaluationMethod('v2', 'EventStream')
  const message = m.encodeRequest({})
  const body = new Uint8Array(5 + message.length)
  new DataView(body.buffer).setUint32(1, message.length)
  body.set(message, 5)
  const abort = new AbortController()
  const res = await fetch(`${rpc}${m.path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/connect+proto', authorization: `Bearer ${token}` },
    body,
    signal: abort.signal,
  })
  expect(res.status).toBe(200)
  const reader = (res.body as ReadableStream<Uint8Array>).getReader()
  let buffered = new Uint8Array(0)
  const next = async () => {
    for (;;) {
      if (buffered.length >= 5) {
        const length = new DataView(buffered.buffer, buffered.byteOffset).getUint32(1)
        if (buffered.length >= 5 + length) {
          const flags = buffered[0]
          const payload = buffered.slice(5, 5 + length)
          buffered = buffered.slice(5 + length)
          return {
            flags,
            message: m.decodeResponse(payload) as {
              type: string
              data?: { fields?: Record<string, { structValue?: { fields?: object } }> }
            },
          }
        }
      }
      const { value, done } = await reader.read()
      if (done) throw new Error('the stream ended')
      buffered = new Uint8Array([...buffered, ...value])
    }
  }
  try {
    expect((await next()).message.type).toBe('provider_ready')
    expect((await api('POST', '/api/flags', { name: 'connect/live', type: 'BOOLEAN', value: true })).status).toBe(201)
    const change = await next()
    expect(change.flags).toBe(0)
    expect(change.message.type).toBe('configuration_change')
    expect(Object.keys(change.message.data?.fields?.flags?.structValue?.fields ?? {})).toEqual(['connect/live'])
  } finally {
    abort.abort()
  }
  // without a token the stream is refused in its end-of-stream envelope, as Connect does
  const refused = await fetch(`${rpc}${m.path}`, { method: 'POST', headers: { 'content-type': 'application/connect+proto' }, body })
  const bytes = new Uint8Array(await refused.arrayBuffer())
  expect(refused.status).toBe(200)
  expect(bytes[0]).toBe(2)
  expect(JSON.parse(new TextDecoder().decode(bytes.subarray(5)))).toMatchObject({ error: { code: 'unauthenticated' } })
})

test('the official flagd web provider evaluates through ResolveAll over JSON and follows changes from its event stream', async () => {
  const withToken: Interceptor = (next) => async (req) => {
    req.header.set('authorization', `Bearer ${token}`)
    return next(req)
  }
  expect((await api('POST', '/api/flags', { name: 'web/live', type: 'BOOLEAN', value: false })).status).toBe(201)
  const port = Number(new URL(rpc).port)
  await OpenFeature.setProviderAndWait(
    new FlagdWebProvider({ host: '127.0.0.1', port, tls: false, maxRetries: 1, interceptors: [withToken] }),
  )
  const client = OpenFeature.getClient()
  expect(client.getBooleanDetails('boolean-flag', false)).toMatchObject({ value: true, variant: 'on', reason: 'STATIC' })
  expect(client.getStringDetails('string-flag', '')).toMatchObject({ value: 'hi', variant: 'greeting' })
  expect(client.getNumberDetails('integer-flag', 0)).toMatchObject({ value: 10, variant: 'ten' })
  expect(client.getObjectDetails('object-flag', {}).value).toMatchObject({ showImages: true })
  expect(client.getBooleanValue('web/live', true)).toBe(false)
  // a change: the stream says so, the provider fetches again and says so too
  const changed = new Promise<void>((resolve) => client.addHandler(ProviderEvents.ConfigurationChanged, () => resolve()))
  expect((await api('PUT', '/api/flags/web/live', { value: true })).status).toBe(200)
  await changed
  expect(client.getBooleanValue('web/live', false)).toBe(true)
})

test('web pages of cors.origins may call it (a preflight answered, the origin allowed); others get no CORS headers', async () => {
  const m = evaluationMethod('v2', 'ResolveBoolean')
  const preflight = await fetch(`${rpc}${m.path}`, {
    method: 'OPTIONS',
    headers: {
      origin: 'http://shop.example',
      'access-control-request-method': 'POST',
      'access-control-request-headers': 'authorization, content-type',
    },
  })
  expect(preflight.status).toBe(204)
  expect(preflight.headers.get('access-control-allow-origin')).toBe('http://shop.example')
  expect(preflight.headers.get('access-control-allow-headers')).toContain('Connect-Protocol-Version')
  const body = m.encodeRequest({ flagKey: 'boolean-flag' })
  const allowed = await fetch(`${rpc}${m.path}`, {
    method: 'POST',
    headers: { origin: 'http://shop.example', 'content-type': 'application/proto', authorization: `Bearer ${token}` },
    body,
  })
  expect(allowed.status).toBe(200)
  expect(allowed.headers.get('access-control-allow-origin')).toBe('http://shop.example')
  const other = await fetch(`${rpc}${m.path}`, {
    method: 'POST',
    headers: { origin: 'http://elsewhere.example', 'content-type': 'application/proto', authorization: `Bearer ${token}` },
    body,
  })
  expect(other.headers.get('access-control-allow-origin')).toBeNull()
  expect(other.headers.get('vary')).toContain('Origin')
})

test('the settled answers: INTEGER through ResolveFloat too, TAG through none (invalid_argument), a disabled flag its reason, an empty variant and the zero value', async () => {
  const decode = (name: string, bytes: ArrayBuffer) => evaluationMethod('v2', name).decodeResponse(new Uint8Array(bytes))
  const ask = (name: string, flagKey: string) =>
    call(evaluationMethod('v2', name).path, 'application/proto', evaluationMethod('v2', name).encodeRequest({ flagKey }))
  const asFloat = await ask('ResolveFloat', 'integer-flag')
  expect(asFloat.status).toBe(200)
  expect(decode('ResolveFloat', await asFloat.arrayBuffer())).toMatchObject({ value: 10, variant: 'ten' })

  expect((await api('POST', '/api/flags', { name: 'rpc/tags', type: 'TAG', enumValues: ['x', 'y'], value: ['y'] })).status).toBe(201)
  for (const name of ['ResolveString', 'ResolveObject']) {
    const refused = await ask(name, 'rpc/tags')
    expect(refused.status).toBe(400)
    expect(((await refused.json()) as { code: string }).code).toBe('invalid_argument')
  }

  expect((await api('POST', '/api/flags', { name: 'rpc/off', type: 'INTEGER', value: 7, enabled: false })).status).toBe(201)
  const disabled = await ask('ResolveInt', 'rpc/off')
  expect(disabled.status).toBe(200)
  expect(decode('ResolveInt', await disabled.arrayBuffer())).toMatchObject({ value: 0, variant: '', reason: 'DISABLED' })
})
