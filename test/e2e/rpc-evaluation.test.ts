/**
 * docs/openfeature.md#rpc with the official `@openfeature/flagd-provider` in its default RPC mode
 * against a real daemon: every flag of flagd-testbed's `testkit-flags.json` answers over RPC what
 * OFREP answers, for contexts of the testbed; a change made through the API evicts the provider's
 * cached answer through the event stream.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { join } from 'node:path'
import { FlagdProvider } from '@openfeature/flagd-provider'
import { type Client, OpenFeature, ProviderEvents } from '@openfeature/server-sdk'
import { freePort } from '../helpers/daemon.ts'
import { PROVIDER_DEADLINE_MS } from '../helpers/flagd-provider-options.ts'
import { OfrepServerProvider } from '../helpers/ofrep-server-provider.ts'
import { type AdminDaemon, daemonForFile } from '../helpers/test-daemon.ts'
import { testkitDetails, testkitFlags } from '../helpers/testkit.ts'

setDefaultTimeout(60_000)
const testkit = testkitFlags()

const rpcPort = freePort()
const daemon = daemonForFile((cwd) => ({
  FLAGD_EVALUATION_SOCKET: join(cwd, 'evaluation.sock'),
  FLAGD_EVALUATION_PORT: String(rpcPort),
  // the JavaScript provider sends its selector with evaluations but nothing with its event stream:
  // pointed at flagd with host and port only, as the provider is meant to be, it is anonymous
  FLAGD_EVALUATION_ANONYMOUS: 'true',
}))
let d: AdminDaemon
let socket: string
let token: string
const api = (method: string, path: string, body?: unknown, auth?: string) => d.api(method, path, body, auth)

beforeAll(async () => {
  d = daemon()
  socket = join(d.cwd, 'evaluation.sock')
  expect((await api('PUT', '/api/migrations', testkit)).status).toBe(200)
  token = await d.token('backend', ['flag:evaluate'])
})
afterAll(async () => {
  await OpenFeature.close()
})

/** The details of `key` for `context` through `client`, with the getter of the flag's type. */
const details = (client: Client, key: string, context: Record<string, unknown>) => testkitDetails(testkit, client, key, context)

const contexts: Record<string, unknown>[] = [
  {},
  { targetingKey: 'user-1' },
  { targetingKey: 'ballmer@macrosoft.com', email: 'ballmer@macrosoft.com' },
  { targetingKey: 'x', email: 'user@faas.com', locale: 'us', age: 30, version: '1.0.1' },
  // fractional-nested-var-flag chooses "yellow" here, not a variant: a GENERAL error, UNKNOWN on the
  // wire, which the provider retries as it does against flagd (docs/openfeature.md#rpc): three more
  // times, after its default back-off of about 7 s together, at once with `retryBackoffMs: 0` below
  { targetingKey: 'jon@company.com', color: 'yellow', 'is-active': true },
]

test('every testkit flag answers over RPC what OFREP answers: value, reason, variant', async () => {
  await OpenFeature.setProviderAndWait(
    'rpc',
    new FlagdProvider({ deadlineMs: PROVIDER_DEADLINE_MS, host: '127.0.0.1', port: rpcPort, cache: 'disabled', retryBackoffMs: 0 }),
  )
  await OpenFeature.setProviderAndWait('remote', new OfrepServerProvider({ baseUrl: d.url, headers: [['X-API-Key', token]] }))
  const rpc = OpenFeature.getClient('rpc')
  const remote = OpenFeature.getClient('remote')
  let compared = 0
  for (const key of Object.keys(testkit.flags))
    for (const context of contexts) {
      const [l, r] = await Promise.all([details(rpc, key, context), details(remote, key, context)])
      expect({ key, context, value: l.value, reason: l.reason, variant: l.variant || undefined, error: l.errorCode }).toEqual({
        key,
        context,
        value: r.value,
        reason: r.reason,
        variant: r.variant || undefined,
        error: r.errorCode,
      })
      compared++
    }
  expect(compared).toBeGreaterThan(100)
})

test("a change evicts the provider's cached answer through the event stream", async () => {
  expect((await api('POST', '/api/flags', { name: 'rpc/live', type: 'BOOLEAN', value: false })).status).toBe(201)
  await OpenFeature.setProviderAndWait('cached', new FlagdProvider({ deadlineMs: PROVIDER_DEADLINE_MS, host: '127.0.0.1', port: rpcPort }))
  const client = OpenFeature.getClient('cached')
  expect((await client.getBooleanDetails('rpc/live', true)).value).toBe(false)
  expect((await client.getBooleanDetails('rpc/live', true)).reason).toBe('CACHED')
  // the provider tells of the change it was sent (and evicts the key first): wait for that event
  const told = new Promise<string[]>((resolve) =>
    client.addHandler(ProviderEvents.ConfigurationChanged, (details) => {
      if (details?.flagsChanged?.includes('rpc/live')) resolve(details.flagsChanged)
    }),
  )
  expect((await api('PUT', '/api/flags/rpc/live', { value: true })).status).toBe(200)
  expect(await told).toEqual(['rpc/live'])
  expect(await client.getBooleanDetails('rpc/live', false)).toMatchObject({ value: true, reason: 'STATIC' })
})

test('a token in the metadata evaluates as that token (its prefixes) and counts in usage; a bad one is refused; a type mismatch is INVALID_ARGUMENT, a failed rule UNKNOWN', async () => {
  const { credentials, Metadata, makeGenericClientConstructor } = await import('@grpc/grpc-js')
  const { evaluationService } = await import('../../src/sync/evaluation-protocol.ts')
  const Client = makeGenericClientConstructor(evaluationService('v2'), 'Service')
  const client = new Client(`127.0.0.1:${rpcPort}`, credentials.createInsecure()) as unknown as {
    ResolveBoolean(
      r: object,
      m: InstanceType<typeof Metadata>,
      done: (err: { code: number } | null, r: { value: boolean; reason: string }) => void,
    ): void
    ResolveString(
      r: object,
      m: InstanceType<typeof Metadata>,
      done: (err: { code: number; details: string } | null, r: { value: string }) => void,
    ): void
    close(): void
  }
  const confined = (
    (await (await api('POST', '/api/tokens', { name: 'confined', permissions: ['flag:evaluate'], flagPrefixes: ['rpc/'] })).json()) as {
      token: string
    }
  ).token
  const call = (key: string, secret: string) =>
    new Promise<{ code?: number; value?: boolean }>((resolve) => {
      const m = new Metadata()
      m.set('authorization', `Bearer ${secret}`)
      client.ResolveBoolean({ flagKey: key, context: { fields: {} } }, m, (err, r) =>
        resolve(err ? { code: err.code } : { value: r.value }),
      )
    })
  try {
    // RPC evaluations count in usage as OFREP's do: total and lastEvaluatedAt
    expect((await api('POST', '/api/flags', { name: 'rpc/counted', type: 'BOOLEAN', value: true })).status).toBe(201)
    for (let i = 0; i < 3; i++) expect(await call('rpc/counted', confined)).toEqual({ value: true })
    const counted = (await (await api('GET', '/api/flags/rpc/counted/usage')).json()) as { total: number; lastEvaluatedAt: string | null }
    expect(counted.total).toBe(3)
    expect(counted.lastEvaluatedAt).not.toBeNull()
    expect(await call('rpc/live', confined)).toEqual({ value: true })
    expect(await call('boolean-flag', confined)).toEqual({ code: 5 }) // NOT_FOUND: outside its prefixes
    expect(await call('boolean-flag', 'fdt_not-a-token')).toEqual({ code: 16 }) // UNAUTHENTICATED
    expect(await call('string-flag', token)).toEqual({ code: 3 }) // INVALID_ARGUMENT: a type mismatch
    const reader = (
      (await (await api('POST', '/api/tokens', { name: 'user-reader', permissions: ['user:read'] })).json()) as { token: string }
    ).token
    expect(await call('boolean-flag', reader)).toEqual({ code: 7 }) // PERMISSION_DENIED: neither flag:evaluate nor flag:read
    // a rule that chooses no variant of its flag: UNKNOWN, flagd's code for GENERAL, with the sentence
    const failed = await new Promise<{ code?: number; details?: string }>((resolve) => {
      const m = new Metadata()
      m.set('authorization', `Bearer ${token}`)
      const context = { fields: { targetingKey: { stringValue: 'jon@company.com' }, color: { stringValue: 'yellow' } } }
      client.ResolveString({ flagKey: 'fractional-nested-var-flag', context }, m, (err) =>
        resolve(err ? { code: err.code, details: err.details } : {}),
      )
    })
    expect(failed).toEqual({ code: 2, details: 'the rule chose "yellow", which is not a variant of this flag' })
  } finally {
    client.close()
  }
})

test('v1 ResolveAll holds every flag the caller may see; a token of another environment evaluates that one', async () => {
  const { credentials, Metadata, makeGenericClientConstructor } = await import('@grpc/grpc-js')
  const { evaluationService } = await import('../../src/sync/evaluation-protocol.ts')
  expect((await api('PUT', '/api/environments/staging', {})).status).toBe(201)
  expect((await api('PUT', '/api/flags/rpc/live?environment=staging', { value: false })).status).toBe(200)
  const staging = (
    (await (await api('POST', '/api/tokens', { name: 'staging-app', permissions: ['flag:evaluate'], environment: 'staging' })).json()) as {
      token: string
    }
  ).token
  const V1 = makeGenericClientConstructor(evaluationService('v1'), 'Service')
  const v1 = new V1(`127.0.0.1:${rpcPort}`, credentials.createInsecure()) as unknown as {
    ResolveAll(
      r: object,
      m: InstanceType<typeof Metadata>,
      done: (err: Error | null, r: { flags: Record<string, { boolValue?: boolean; reason: string }> }) => void,
    ): void
    ResolveBoolean(r: object, m: InstanceType<typeof Metadata>, done: (err: Error | null, r: { value: boolean }) => void): void
    close(): void
  }
  const as = (secret: string) => {
    const m = new Metadata()
    m.set('authorization', `Bearer ${secret}`)
    return m
  }
  try {
    const all = await new Promise<{ flags: Record<string, { boolValue?: boolean; reason: string }> }>((resolve, reject) =>
      v1.ResolveAll({ context: { fields: {} } }, as(token), (err, r) => (err ? reject(err) : resolve(r))),
    )
    expect(Object.keys(all.flags)).toContain('boolean-flag')
    expect(all.flags['rpc/live']).toMatchObject({ boolValue: true })
    const inStaging = await new Promise<{ value: boolean }>((resolve, reject) =>
      v1.ResolveBoolean({ flagKey: 'rpc/live', context: { fields: {} } }, as(staging), (err, r) => (err ? reject(err) : resolve(r))),
    )
    expect(inStaging.value).toBe(false)
  } finally {
    v1.close()
  }
})

test('on the unix socket no token is needed (its file mode decides who may connect)', async () => {
  const { credentials, Metadata, makeGenericClientConstructor } = await import('@grpc/grpc-js')
  const { evaluationService } = await import('../../src/sync/evaluation-protocol.ts')
  const V2 = makeGenericClientConstructor(evaluationService('v2'), 'Service')
  const local = new V2(`unix:${socket}`, credentials.createInsecure()) as unknown as {
    ResolveString(
      r: object,
      m: InstanceType<typeof Metadata>,
      done: (err: Error | null, r: { value: string; reason: string }) => void,
    ): void
    close(): void
  }
  try {
    const answer = await new Promise<{ value: string; reason: string }>((resolve, reject) =>
      local.ResolveString({ flagKey: 'string-flag', context: { fields: {} } }, new Metadata(), (err, r) =>
        err ? reject(err) : resolve(r),
      ),
    )
    expect(answer).toMatchObject({ value: 'hi', reason: 'STATIC' })
  } finally {
    local.close()
  }
})
