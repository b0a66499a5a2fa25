/**
 * docs/openfeature.md#in-process with the official `@openfeature/flagd-provider` in in-process mode against a real
 * daemon: every flag of flagd-testbed's `testkit-flags.json` evaluates locally to what OFREP answers,
 * for every context of the testbed's scenarios; a change through the API reaches the provider within
 * a second; a token's prefixes limit what it receives and its revocation closes its stream; no token,
 * no flags over TCP; the unix socket needs none; a stopping daemon ends its streams cleanly.
 */

import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'
import { credentials, type Client as GrpcClient, Metadata, makeGenericClientConstructor, type ServiceError } from '@grpc/grpc-js'
import { FlagdProvider } from '@openfeature/flagd-provider'
import { type Client, OpenFeature, ProviderEvents } from '@openfeature/server-sdk'
import { FLAG_SYNC_SERVICE } from '../../src/sync/sync-protocol.ts'
import { freePort } from '../helpers/daemon.ts'
import { eventually, wakeSignal } from '../helpers/eventually.ts'
import { PROVIDER_DEADLINE_MS } from '../helpers/flagd-provider-options.ts'
import { parseFeature } from '../helpers/gherkin.ts'
import { OfrepServerProvider } from '../helpers/ofrep-server-provider.ts'
import { askedOf, chainContext, prerequisiteChain } from '../helpers/prerequisite-chain.ts'
import { type AdminDaemon, daemonForFile, startAdminDaemon } from '../helpers/test-daemon.ts'
import { TESTBED, testkitDetails, testkitFlags } from '../helpers/testkit.ts'

const testbed = TESTBED
const testkit = testkitFlags()

/** Every context a testbed scenario builds, as its steps build it. */
function testbedContexts(): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [{}]
  for (const file of readdirSync(join(testbed, 'gherkin')).filter((f) => f.endsWith('.feature'))) {
    for (const s of parseFeature(readFileSync(join(testbed, 'gherkin', file), 'utf8'))) {
      const context: Record<string, unknown> = {}
      for (const { text } of s.steps) {
        let m: RegExpExecArray | null
        if ((m = /^a context containing a key "([^"]*)", with type "(\w+)" and with value "(.*)"$/.exec(text))) {
          const [, key, type, value] = m as unknown as [string, string, string, string]
          context[key] = type === 'Boolean' ? value === 'true' : type === 'Integer' || type === 'Float' ? Number(value) : value
        } else if ((m = /^a context containing a targeting key with value "(.*)"$/.exec(text))) context.targetingKey = m[1]
        else if (
          (m = /^a context containing a nested property with outer key "([^"]*)" and inner key "([^"]*)", with value "(.*)"$/.exec(text))
        )
          context[m[1] as string] = { ...((context[m[1] as string] as object) ?? {}), [m[2] as string]: m[3] }
      }
      if (Object.keys(context).length > 0 && !out.some((c) => JSON.stringify(c) === JSON.stringify(context))) out.push(context)
    }
  }
  return out
}

const syncPort = freePort()
const daemon = daemonForFile((cwd) => ({ FLAGD_SYNC_PORT: String(syncPort), FLAGD_SYNC_SOCKET: join(cwd, 'sync.sock') }))
let d: AdminDaemon
let socket: string
let token: string
const api = (method: string, path: string, body?: unknown, auth = token) => d.api(method, path, body, auth)
let admin: string

/** A raw client of the sync protocol, to see statuses and documents as they are sent. */
const SyncClient = makeGenericClientConstructor(FLAG_SYNC_SERVICE, 'FlagSyncService')
type Stream = { on(event: string, listener: (arg: never) => void): void }
type RawClient = GrpcClient & {
  fetchAllFlags(request: object, metadata: Metadata, done: (err: ServiceError | null, r: { flagConfiguration: string }) => void): void
  syncFlags(request: object, metadata?: Metadata): Stream
}
const raw = (address = `127.0.0.1:${syncPort}`) => new SyncClient(address, credentials.createInsecure()) as unknown as RawClient
const bearer = (secret: string) => {
  const m = new Metadata()
  m.set('authorization', `Bearer ${secret}`)
  return m
}
const fetchAll = (client: RawClient, metadata = new Metadata(), selector = '') =>
  new Promise<{ flags: Record<string, unknown> }>((resolve, reject) =>
    client.fetchAllFlags({ providerId: '', selector }, metadata, (err, r) =>
      err ? reject(err) : resolve(JSON.parse(r.flagConfiguration)),
    ),
  )

beforeAll(async () => {
  d = daemon()
  socket = join(d.cwd, 'sync.sock')
  admin = d.admin
  expect((await api('PUT', '/api/migrations', testkit, admin)).status).toBe(200)
  token = await d.token('backend', ['flag:evaluate'])
}, 30_000)
afterAll(async () => {
  await OpenFeature.close()
})

/** The official flagd provider in-process over TCP, with the backend token. */
const tokenProvider = () =>
  new FlagdProvider({
    deadlineMs: PROVIDER_DEADLINE_MS,
    resolverType: 'in-process',
    host: '127.0.0.1',
    port: syncPort,
    selector: `token=${token}`,
  })

/** The details of `key` for `context` through `client`, with the getter of the flag's type. */
const details = (client: Client, key: string, context: Record<string, unknown>) => testkitDetails(testkit, client, key, context)

describe('the official flagd provider, in-process', () => {
  test('every testkit flag answers locally what OFREP answers, for every context of the testbed', async () => {
    await OpenFeature.setProviderAndWait('local', tokenProvider())
    await OpenFeature.setProviderAndWait('remote', new OfrepServerProvider({ baseUrl: d.url, headers: [['X-API-Key', token]] }))
    const local = OpenFeature.getClient('local')
    const remote = OpenFeature.getClient('remote')
    const contexts = testbedContexts()
    expect(contexts.length).toBeGreaterThan(20)
    let compared = 0
    for (const key of Object.keys(testkit.flags))
      for (const context of contexts) {
        const [l, r] = await Promise.all([details(local, key, context), details(remote, key, context)])
        // the variant too, static answers included: one name on every path (the imported
        // document's defaultVariant), so analytics keyed on it do not split
        expect({ key, context, value: l.value, reason: l.reason, variant: l.variant, error: l.errorCode }).toEqual({
          key,
          context,
          value: r.value,
          reason: r.reason,
          variant: r.variant,
          error: r.errorCode,
        })
        compared++
      }
    expect(compared).toBeGreaterThan(1000)
  }, 60_000)

  test('a change made through the API is pushed to the provider, which announces it', async () => {
    await api('POST', '/api/flags', { name: 'live/switch', type: 'BOOLEAN', value: false }, admin)
    const provider = tokenProvider()
    await OpenFeature.setProviderAndWait('live', provider)
    const client = OpenFeature.getClient('live')
    expect(await client.getBooleanValue('live/switch', true)).toBe(false)
    let changed = 0
    const onChange = wakeSignal()
    client.addHandler(ProviderEvents.ConfigurationChanged, () => {
      changed++
      onChange.fire()
    })
    expect((await api('PUT', '/api/flags/live/switch', { value: true }, admin)).status).toBe(200)
    // pushed over the provider's sync stream: it says so with ConfigurationChanged and the value
    // follows; how fast is bench/sync.ts's, never asserted here (docs/development.md#time)
    await eventually(() => client.getBooleanValue('live/switch', false), { wakeOn: onChange.wakeOn })
    await eventually(() => changed > 0, { wakeOn: onChange.wakeOn })
  })

  test('a progressive rollout moves the same in the provider as over OFREP, by targetingKey and by another attribute', async () => {
    // a week in 100 steps, now half-way through step 50: far from any step's edge
    const step = (7 * 86_400_000) / 100
    const start = Date.now() - 50.5 * step
    const window = { start: new Date(start).toISOString(), end: new Date(start + 100 * step).toISOString() }
    const rollouts: [string, Record<string, unknown>][] = [
      ['ramp/key', { type: 'BOOLEAN', value: false, rollout: { variant: 'true', ...window, fromPercent: 5, toPercent: 100 } }],
      [
        'ramp/by',
        { type: 'BOOLEAN', value: false, rollout: { variant: 'true', ...window, fromPercent: 10, toPercent: 90, by: 'account' } },
      ],
      [
        'ramp/ruled',
        {
          type: 'STRING',
          value: 'old',
          variants: { new: 'new', pro: 'pro' },
          targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'pro', null] },
          rollout: { variant: 'new', ...window, fromPercent: 0, toPercent: 60 },
        },
      ],
    ]
    for (const [name, body] of rollouts) expect((await api('POST', '/api/flags', { name, ...body }, admin)).status).toBe(201)
    const provider = tokenProvider()
    await OpenFeature.setProviderAndWait('ramp', provider)
    await OpenFeature.setProviderAndWait('ramp-ofrep', new OfrepServerProvider({ baseUrl: d.url, headers: [['X-API-Key', token]] }))
    const local = OpenFeature.getClient('ramp')
    const remote = OpenFeature.getClient('ramp-ofrep')
    // the provider holds the flags once its document names them
    await eventually(async () => (await local.getBooleanDetails('ramp/by', false)).reason !== 'ERROR')
    let inside = 0
    for (let i = 0; i < 150; i++) {
      const context = {
        ...(i % 13 === 0 ? {} : { targetingKey: `user-${i}` }),
        ...(i % 4 === 0 ? {} : { account: `acct-${i % 60}` }),
        ...(i % 6 === 0 ? { plan: 'pro' } : {}),
      }
      for (const [name, body] of rollouts) {
        const get = (c: Client) =>
          body.type === 'BOOLEAN' ? c.getBooleanDetails(name, false, context) : c.getStringDetails(name, '', context)
        const [l, r] = await Promise.all([get(local), get(remote)])
        expect({ name, context, value: l.value, variant: l.variant }).toEqual({ name, context, value: r.value, variant: r.variant })
        if (r.reason === 'TARGETING_MATCH' && (r.value === true || r.value === 'new')) inside++
      }
    }
    expect(inside).toBeGreaterThan(50)
  }, 30_000)

  test('flags with prerequisites (a split, a rollout and an A/B test in the chain) answer the same in the provider as over OFREP for 500 contexts', async () => {
    // a rollout that ended long ago serves its last share (40 %) whatever the clock reads: no test
    // outcome depends on when it runs
    const made = prerequisiteChain('pre/', { start: '2020-01-01T00:00:00Z', end: '2020-01-08T00:00:00Z' })
    for (const [name, body] of made) {
      const res = await api('POST', '/api/flags', { name, ...body }, admin)
      expect({ name, status: res.status }).toEqual({ name, status: 201 })
    }
    await OpenFeature.setProviderAndWait('pre', tokenProvider())
    await OpenFeature.setProviderAndWait('pre-ofrep', new OfrepServerProvider({ baseUrl: d.url, headers: [['X-API-Key', token]] }))
    const local = OpenFeature.getClient('pre')
    const remote = OpenFeature.getClient('pre-ofrep')
    await eventually(async () => (await local.getStringDetails('pre/top', '')).reason !== 'ERROR')
    const seen = new Set<unknown>()
    for (let i = 0; i < 500; i++) {
      const context = chainContext(i)
      for (const name of askedOf('pre/')) {
        const [l, r] = await Promise.all([local.getStringDetails(name, '', context), remote.getStringDetails(name, '', context)])
        expect({ name, context, value: l.value }).toEqual({ name, context, value: r.value })
        if (name === 'pre/top') seen.add(r.value)
      }
    }
    // both sides of the chain were seen
    expect(seen).toEqual(new Set(['fancy', 'plain']))
  }, 60_000)

  test('the unix socket needs no token (the file system guards it)', async () => {
    expect(statSync(socket).mode & 0o777).toBe(0o660) // owner and group may connect, nobody else
    await OpenFeature.setProviderAndWait(
      'socket',
      new FlagdProvider({ deadlineMs: PROVIDER_DEADLINE_MS, resolverType: 'in-process', socketPath: socket }),
    )
    const client = OpenFeature.getClient('socket')
    expect(await client.getBooleanDetails('boolean-flag', false)).toMatchObject({ value: true, reason: 'STATIC' })
  })
})

describe('access', () => {
  test('over TCP, no token means no flags; a bad one, or one without flag:evaluate, is refused by name', async () => {
    const client = raw()
    try {
      await expect(fetchAll(client)).rejects.toMatchObject({ code: 16, details: expect.stringContaining('an API token is needed') })
      await expect(fetchAll(client, bearer('fdt_nope'))).rejects.toMatchObject({ code: 16 })
      await expect(fetchAll(client, new Metadata(), 'myFlags.json')).rejects.toMatchObject({
        code: 3,
        details: expect.stringContaining('token='),
      })
      const writer = (
        (await (await api('POST', '/api/tokens', { name: 'users-only', permissions: ['user:read'] }, admin)).json()) as { token: string }
      ).token
      await expect(fetchAll(client, bearer(writer))).rejects.toMatchObject({ code: 7 })
      const doc = await fetchAll(client, bearer(token))
      expect(Object.keys(doc.flags)).toContain('boolean-flag')
    } finally {
      client.close()
    }
  })

  test('with sync.anonymous, TCP callers need no token (a token still limits what it receives)', async () => {
    const port = freePort()
    const anonymous = await startAdminDaemon({ FLAGD_SYNC_PORT: String(port), FLAGD_SYNC_ANONYMOUS: 'true' })
    const client = raw(`127.0.0.1:${port}`)
    try {
      const outcome = (metadata: Metadata) =>
        fetchAll(client, metadata).then(
          (doc) => doc.flags,
          (err: ServiceError) => err.code,
        )
      expect(await outcome(new Metadata())).toEqual({})
      expect(await outcome(bearer('fdt_nope'))).toBe(16) // a token given is still checked
    } finally {
      client.close()
      await anonymous.stop()
    }
  })

  test("a token's prefixes limit the flags and segments it receives; its revocation closes its stream", async () => {
    await api('PUT', '/api/segments/team-a', { rule: { '==': [{ var: 'team' }, 'a'] } }, admin)
    await api(
      'POST',
      '/api/flags',
      { name: 'mobile/new-ui', type: 'BOOLEAN', targeting: { if: [{ $ref: 'team-a' }, 'true', 'false'] } },
      admin,
    )
    const made = (await (
      await api('POST', '/api/tokens', { name: 'mobile', permissions: ['flag:evaluate'], flagPrefixes: ['mobile/'] }, admin)
    ).json()) as {
      token: string
      id: string
    }
    const client = raw()
    try {
      const doc = (await fetchAll(client, bearer(made.token))) as { flags: Record<string, unknown>; $evaluators?: Record<string, unknown> }
      expect(Object.keys(doc.flags)).toEqual(['mobile/new-ui'])
      expect(Object.keys(doc.$evaluators ?? {})).toEqual(['team-a'])

      const received: string[] = []
      const ended = new Promise<{ code: number; details: string }>((resolve) => {
        const stream = client.syncFlags({ providerId: '', selector: `token=${made.token}` })
        stream.on('data', (m: { flagConfiguration: string }) => received.push(m.flagConfiguration))
        stream.on('error', (err: ServiceError) => resolve({ code: err.code, details: err.details }))
      })
      while (received.length === 0) await Bun.sleep(5)
      expect((await api('DELETE', `/api/tokens/${made.id}`, undefined, admin)).status).toBeLessThan(300)
      await api('PUT', '/api/flags/boolean-flag', { description: 'a change the stream hears of' }, admin)
      expect(await ended).toMatchObject({ code: 16, details: expect.stringContaining('revoked') })
      expect(received).toHaveLength(1) // nothing was sent after the revocation
    } finally {
      client.close()
    }
  })
})

test('an expiring token: its stream is closed at the first change after it expired', async () => {
  const expiresAt = new Date(Date.now() + 1500).toISOString()
  const made = (await (
    await api('POST', '/api/tokens', { name: 'short-lived', permissions: ['flag:evaluate'], expiresAt }, admin)
  ).json()) as {
    token: string
  }
  const client = raw()
  try {
    const ended = new Promise<number>((resolve) => {
      const stream = client.syncFlags({ providerId: '', selector: `token=${made.token}` })
      stream.on('data', () => {})
      stream.on('error', (err: ServiceError) => resolve(err.code))
    })
    await Bun.sleep(1700)
    await api('PUT', '/api/flags/boolean-flag', { description: 'after the expiry' }, admin)
    expect(await ended).toBe(16)
  } finally {
    client.close()
  }
})

describe('operations', () => {
  afterEach(async () => {
    await OpenFeature.clearProviders()
  })

  test('open streams are counted in /metrics and logged with their token; a stopping daemon ends them cleanly', async () => {
    const client = raw()
    let opened: () => void = () => {}
    const open = new Promise<void>((resolve) => {
      opened = resolve
    })
    const ended = new Promise<number>((resolve) => {
      const stream = client.syncFlags({ providerId: '', selector: '' }, bearer(token))
      stream.on('data', () => opened())
      stream.on('error', (err: ServiceError) => resolve(err.code))
      stream.on('end', () => resolve(0))
    })
    // the first document arrives once the daemon holds the stream: stopping before that would end a
    // call the daemon never had (UNAVAILABLE, which is not what this test is about)
    await open
    const metrics = await (await fetch(`${d.url}/metrics`)).text()
    expect(Number(/^flagd_sync_streams (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1)
    // earlier tests' changes were written out to their streams, and timed
    expect(Number(/^flagd_sync_fanout_seconds_count (\d+)$/m.exec(metrics)?.[1])).toBeGreaterThanOrEqual(1)
    expect(d.output()).toContain('"caller":"backend"')
    expect(d.output()).toContain('sync stream opened')
    const stopping = performance.now()
    d.proc.kill('SIGTERM')
    expect(await d.proc.exited).toBe(0)
    expect(performance.now() - stopping).toBeLessThan(5000)
    expect(await ended).toBe(0)
    client.close()
  })
})
