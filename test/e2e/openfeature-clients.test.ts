/**
 * docs/openfeature.md#ofrep (with CORS, docs/api.md#conventions) with the real OpenFeature clients against a running daemon: the server SDK with
 * the OFREP provider evaluates every flag type with an evaluation-only API token, and the web SDK
 * with the OFREP web provider (an EventSource from npm standing in for the browser's) sees a change
 * pushed over the event stream, with polling turned far out of reach.
 */

import { afterEach, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { OFREPProvider } from '@openfeature/ofrep-provider'
import { OFREPWebProvider } from '@openfeature/ofrep-web-provider'
import { OpenFeature as ServerFeature } from '@openfeature/server-sdk'
import { ProviderEvents, OpenFeature as WebFeature } from '@openfeature/web-sdk'
import { EventSource } from 'eventsource'
import { splitVariant } from '../../src/domain/evaluation.ts'
import { type AdminDaemon, daemonForFile } from '../helpers/test-daemon.ts'

setDefaultTimeout(30_000)
const daemon = daemonForFile({ FLAGD_CORS_ORIGINS: 'http://app.example' })
let d: AdminDaemon
let appToken = ''

const api = async (method: string, path: string, body?: unknown, token?: string) => {
  const res = await d.api(method, path, body, token)
  return { status: res.status, body: (await res.json().catch(() => undefined)) as any }
}

beforeAll(async () => {
  d = daemon()
  const flags = [
    { name: 'app/checkout/new_flow', type: 'BOOLEAN', value: true },
    { name: 'app/retries', type: 'INTEGER', defaultValue: 3, value: 5 },
    { name: 'app/banner', type: 'STRING', defaultValue: 'hello' },
    { name: 'app/theme', type: 'ENUM', enumValues: ['light', 'dark'], value: 'dark' },
    { name: 'app/regions', type: 'TAG', enumValues: ['eu', 'us', 'ap'], value: ['eu', 'us'] },
    { name: 'app/experiment', type: 'AB-TEST', chancePercentB: 40 },
  ]
  for (const flag of flags) expect((await api('POST', '/api/flags', flag)).status).toBe(201)
  appToken = (await api('POST', '/api/tokens', { name: 'storefront', permissions: ['flag:evaluate'] })).body.token
})
afterEach(async () => {
  await ServerFeature.close()
  await WebFeature.close()
})

test('server SDK + OFREP provider: every type, an A/B split that never flips, a missing flag', async () => {
  await ServerFeature.setProviderAndWait(new OFREPProvider({ baseUrl: d.url, headers: [['X-API-Key', appToken]] }))
  const client = ServerFeature.getClient()
  expect(await client.getBooleanValue('app/checkout/new_flow', false)).toBe(true)
  expect(await client.getNumberValue('app/retries', 0)).toBe(5)
  expect(await client.getStringValue('app/banner', 'x')).toBe('hello')
  expect(await client.getStringValue('app/theme', 'light')).toBe('dark')
  expect(await client.getObjectValue('app/regions', [])).toEqual(['eu', 'us'])

  const details = await client.getStringDetails('app/banner', 'x')
  expect(details).toMatchObject({ value: 'hello', reason: 'DEFAULT', variant: 'default' })
  expect(details.flagMetadata).toMatchObject({ type: 'STRING', revision: 1 })

  for (let i = 0; i < 25; i++) {
    const targetingKey = `customer-${i}`
    const first = await client.getStringDetails('app/experiment', 'A', { targetingKey })
    expect(first.reason).toBe('SPLIT')
    expect(first.value).toBe(splitVariant('app/experiment', targetingKey, 40))
    expect(await client.getStringValue('app/experiment', 'A', { targetingKey })).toBe(first.value)
  }

  const missing = await client.getBooleanDetails('app/none', false)
  expect(missing).toMatchObject({ value: false, errorCode: 'FLAG_NOT_FOUND' })
})

test('web SDK + OFREP web provider: a change is pushed over the event stream, not polled', async () => {
  const globals = globalThis as { EventSource?: unknown }
  const previous = globals.EventSource
  globals.EventSource = class extends EventSource {
    constructor(url: string | URL) {
      super(url) // the ticket in the URL is the credential: no headers, as in a browser
    }
  }
  try {
    await WebFeature.setContext({ targetingKey: 'visitor-1' })
    const provider = new OFREPWebProvider({
      baseUrl: d.url,
      headers: [['X-API-Key', appToken]],
      changeDetection: 'sse',
      pollInterval: 600_000,
    })
    await WebFeature.setProviderAndWait(provider)
    const client = WebFeature.getClient()
    expect(client.getNumberValue('app/retries', 0)).toBe(5)
    expect(client.getStringValue('app/experiment', 'A')).toBe(splitVariant('app/experiment', 'visitor-1', 40))

    const changed = new Promise<void>((resolve) => client.addHandler(ProviderEvents.ConfigurationChanged, () => resolve()))
    await Bun.sleep(300) // let the stream connect
    expect((await api('PUT', '/api/flags/app/retries', { value: 7 })).status).toBe(200)
    await Promise.race([changed, Bun.sleep(5000).then(() => Promise.reject(new Error('no change event within 5 s')))])
    expect(client.getNumberValue('app/retries', 0)).toBe(7)
  } finally {
    globals.EventSource = previous
  }
})

test('an evaluation-only token cannot read or change flags through the management API', async () => {
  expect((await api('GET', '/api/flags', undefined, appToken)).status).toBe(403)
  expect((await api('PUT', '/api/flags/app/retries', { value: 1 }, appToken)).status).toBe(403)
})
