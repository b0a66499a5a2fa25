/**
 * docs/api.md#webhooks: signed webhook deliveries to a receiver on 127.0.0.1 that checks every signature,
 * goes down and comes back: at-least-once, in order, the same delivery id and body on a retry,
 * progress kept across restarts, given up (and counted) only after the last retry.
 */

import { afterAll, afterEach, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { deliveryBody, matchesEvents, signature } from '../../src/services/webhook-dispatcher.ts'
import { eventually, wakeSignal } from '../helpers/eventually.ts'
import { createTestApp, type TestApp, tempDir } from '../helpers/test-app.ts'

const SECRET = 'receiver-shared-secret'
const dirs: string[] = []
const apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps.splice(0)) await a.close().catch(() => {})
})
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true })
})

interface Received {
  id: number
  event: string
  body: { id: number; type: string; environment: string; target: { name: string }; after: { value?: unknown } | null }
  raw: string
}

/** A receiver that verifies signatures; `up` decides whether it answers 200 or 503. */
/** Fired by every request a receiver gets: until() looks again then. */
const received = wakeSignal()

function receiver() {
  const got: Received[] = []
  const attempts: string[] = []
  const state = { up: true, badSignatures: 0 }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      const raw = await req.text()
      const ts = req.headers.get('x-flagd-timestamp') ?? ''
      const expected = `sha256=${createHmac('sha256', SECRET).update(`${ts}.${raw}`).digest('hex')}`
      if (req.headers.get('x-flagd-signature') !== expected || Math.abs(Date.now() / 1000 - Number(ts)) > 300) state.badSignatures++
      attempts.push(`${req.headers.get('x-flagd-delivery')} ${raw}`)
      if (!state.up) {
        received.fire()
        return new Response('down', { status: 503 })
      }
      got.push({
        id: Number(req.headers.get('x-flagd-delivery')),
        event: req.headers.get('x-flagd-event') ?? '',
        body: JSON.parse(raw),
        raw,
      })
      received.fire()
      return new Response('ok')
    },
  })
  return { got, attempts, state, url: `http://127.0.0.1:${server.port}/hook`, stop: () => server.stop(true) }
}

async function app(dataDir: string, url: string, delays = [20, 40, 80]) {
  const env = { FLAGD_WEBHOOKS: JSON.stringify([{ name: 'ci', url, events: ['flag.*'], secret: SECRET }]), FLAGD_ENVIRONMENT: 'staging' }
  const a = await createTestApp(env, { dataDir, webhookRetryDelaysMs: delays })
  apps.push(a)
  return a
}

const until = (check: () => boolean, ms = 20_000) => eventually(check, { within: ms, wakeOn: received.wakeOn })

test('webhooks named like built-in properties of objects go on from their own cursors, or start at the present', async () => {
  const r = receiver()
  const dir = tempDir()
  dirs.push(dir)
  try {
    const first = await createTestApp({}, { dataDir: dir })
    await first.req('POST', '/api/flags', { token: first.adminToken, body: { name: 'named/one', type: 'INTEGER' } })
    const delivered = first.app.store.committed().revision
    await first.close()
    apps.splice(apps.indexOf(first), 1)
    // two of them delivered up to named/one in an earlier run; the other two are new
    writeFileSync(join(dir, 'webhooks.json'), JSON.stringify({ ['__proto__']: delivered, toString: delivered }))
    const names = ['__proto__', 'toString', 'constructor', 'hasOwnProperty']
    const hooks = names.map((name) => ({ name, url: `${r.url}?${name}`, events: ['flag.*'], secret: SECRET }))
    const again = await createTestApp({ FLAGD_WEBHOOKS: JSON.stringify(hooks) }, { dataDir: dir, webhookRetryDelaysMs: [20] })
    apps.push(again)
    await again.req('POST', '/api/flags', { token: again.adminToken, body: { name: 'named/two', type: 'INTEGER' } })
    // each hook delivers in order: once all have delivered named/two, anything before it has arrived too
    await until(() => r.got.filter((g) => g.body.target.name === 'named/two').length >= names.length)
    expect(r.got.map((g) => g.body.target.name)).toEqual(names.map(() => 'named/two'))
  } finally {
    r.stop()
  }
})

test('signed deliveries of matching entries, in order, with the payload of docs/api.md#webhooks', async () => {
  const r = receiver()
  const dir = tempDir()
  dirs.push(dir)
  try {
    const a = await app(dir, r.url)
    await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'w/a', type: 'INTEGER' } })
    await a.userWith([], 'not-a-flag-event')
    for (let i = 1; i <= 5; i++) await a.req('PUT', '/api/flags/w/a', { token: a.adminToken, body: { value: i } })
    await until(() => r.got.length >= 6)
    expect(r.state.badSignatures).toBe(0)
    expect(r.got.map((g) => g.event)).toEqual([
      'flag.created',
      'flag.updated',
      'flag.updated',
      'flag.updated',
      'flag.updated',
      'flag.updated',
    ])
    expect(r.got.map((g) => g.body.after?.value ?? null)).toEqual([null, 1, 2, 3, 4, 5])
    const ids = r.got.map((g) => g.id)
    expect(ids).toEqual([...ids].sort((x, y) => x - y))
    expect(r.got[0]!.body).toMatchObject({
      id: ids[0],
      type: 'flag.created',
      environment: 'staging',
      target: { name: 'w/a' },
      actor: { type: 'user', name: 'admin' },
      revision: 1,
      before: null,
    })
    expect(Object.keys(r.got[0]!.body).sort()).toEqual([
      'actor',
      'after',
      'at',
      'before',
      'environment',
      'id',
      'revision',
      'target',
      'type',
    ])
    const [entry] = (await a.req('GET', `/api/audit?flag=w/a&limit=1`, { token: a.adminToken })).body
    expect(r.got.at(-1)!.raw).toBe(deliveryBody(entry, 'staging'))
  } finally {
    r.stop()
  }
})

test('a receiver that was down gets every missed event, in order, the same body again; progress survives restarts', async () => {
  const r = receiver()
  const dir = tempDir()
  dirs.push(dir)
  try {
    const first = await app(dir, r.url)
    await first.req('POST', '/api/flags', { token: first.adminToken, body: { name: 'd/x', type: 'INTEGER' } })
    await until(() => r.got.length === 1)
    r.state.up = false
    for (let i = 1; i <= 3; i++) await first.req('PUT', '/api/flags/d/x', { token: first.adminToken, body: { value: i } })
    await until(() => r.attempts.length >= 3) // the first missed one is being retried
    await first.close()
    apps.splice(apps.indexOf(first), 1)
    // a change while no daemon runs (the CLI's way): recorded, and delivered on the next start
    const offline = await createTestApp({}, { dataDir: dir })
    await offline.req('PUT', '/api/flags/d/x', { token: offline.adminToken, body: { value: 4 } })
    await offline.close()

    r.state.up = true
    await app(dir, r.url)
    await until(() => r.got.length >= 5)
    expect(r.got.map((g) => g.body.after?.value ?? null)).toEqual([null, 1, 2, 3, 4])
    const retried = r.attempts.filter((a) => a.startsWith(`${r.got[1]!.id} `))
    expect(new Set(retried).size).toBe(1) // every attempt of one delivery: the same id and body
    expect(retried.length).toBeGreaterThanOrEqual(2)
    expect(r.state.badSignatures).toBe(0)
  } finally {
    r.stop()
  }
})

test('after the last retry an entry is given up and counted; later entries go on', async () => {
  const r = receiver()
  const dir = tempDir()
  dirs.push(dir)
  try {
    const a = await app(dir, r.url, [10, 10])
    r.state.up = false
    await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'g/x', type: 'BOOLEAN' } })
    await until(() => r.attempts.length === 3)
    await Bun.sleep(50)
    r.state.up = true
    await a.req('PUT', '/api/flags/g/x', { token: a.adminToken, body: { value: true } })
    await until(() => r.got.length === 1)
    expect(r.got[0]!.event).toBe('flag.updated')
    // the delivery counts once the receiver's answer is back, a moment after the receiver has it
    const delivered = 'flagd_webhook_deliveries_total{webhook="ci",outcome="delivered"} 1'
    let metrics = await a.req('GET', '/metrics')
    for (const deadline = Date.now() + 5000; !metrics.text.includes(delivered) && Date.now() < deadline; ) {
      await Bun.sleep(10)
      metrics = await a.req('GET', '/metrics')
    }
    expect(metrics.text).toContain('flagd_webhook_deliveries_total{webhook="ci",outcome="failed"} 1')
    expect(metrics.text).toContain('flagd_webhook_deliveries_total{webhook="ci",outcome="retried"} 2')
    expect(metrics.text).toContain(delivered)
  } finally {
    r.stop()
  }
})

test('event patterns and the signature format', () => {
  expect(matchesEvents('flag.updated', ['flag.*'])).toBe(true)
  expect(matchesEvents('user.created', ['flag.*'])).toBe(false)
  expect(matchesEvents('user.created', ['*'])).toBe(true)
  expect(matchesEvents('flag.deleted', ['flag.updated'])).toBe(false)
  expect(signature('s', 1700000000, '{}')).toBe(`sha256=${createHmac('sha256', 's').update('1700000000.{}').digest('hex')}`)
})

test('a bad webhooks setting stops start-up naming it', async () => {
  const bad = [
    [{ url: 'ftp://x', events: ['*'], secret: SECRET }],
    [{ url: 'http://x', events: [], secret: SECRET }],
    [{ url: 'http://x', events: ['flags.*'], secret: SECRET }],
    [{ url: 'http://x', events: ['*'], secret: 'short' }],
    [{ url: 'http://x', events: ['*'], secret: SECRET, extra: 1 }],
  ]
  for (const webhooks of bad) {
    const err = await createTestApp({ FLAGD_WEBHOOKS: JSON.stringify(webhooks) }).catch((e) => e)
    expect(String(err)).toContain('webhooks')
  }
})

test('a webhook without a name is labelled by its host: metrics and logs never show its user info, path or query', async () => {
  const r = receiver()
  const dir = tempDir()
  dirs.push(dir)
  try {
    const u = new URL(r.url)
    const secretUrl = `http://hookuser:hookpass@${u.host}/hook/T000/B000/XXXXsecretpath?token=qsecret`
    const host = new URL(r.url).host
    const a = await createTestApp(
      { FLAGD_WEBHOOKS: JSON.stringify([{ url: secretUrl, events: ['flag.*'], secret: SECRET }]) },
      { dataDir: dir },
    )
    apps.push(a)
    expect(a.app.config.webhooks[0]?.name).toBe(host)
    await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'w/named', type: 'BOOLEAN' } })
    await until(() => r.got.length === 1)
    // counted once the receiver's answer is in
    let text = ''
    for (let i = 0; i < 100 && !text.includes('outcome="delivered"'); i++) {
      text = (await a.req('GET', '/metrics')).text
      if (!text.includes('outcome="delivered"')) await Bun.sleep(20)
    }
    expect(text).toContain(`flagd_webhook_deliveries_total{webhook="${host}",outcome="delivered"} 1`)
    for (const leak of ['hookpass', 'hookuser', 'secretpath', 'qsecret', 'T000']) expect(text).not.toContain(leak)
  } finally {
    r.stop()
  }
})

test('two unnamed webhooks to one host must be named; no start-up error shows a secret', async () => {
  const twice = [
    { url: 'https://hooks.example.com/a', events: ['*'], secret: SECRET },
    { url: 'https://hooks.example.com/b', events: ['*'], secret: SECRET },
  ]
  const err = await createTestApp({ FLAGD_WEBHOOKS: JSON.stringify(twice) }).catch((e: unknown) => e)
  expect(String(err)).toContain('two webhooks go to hooks.example.com; give each a name')
  for (const bad of [
    [{ url: 'https://u:pw@hooks.example.com/p', events: ['nope'], secret: SECRET }],
    [...twice, { ...twice[0], name: 'x' }, { ...twice[0], name: 'x' }],
    '[{"url": "https://hooks.example.com", "secret": "',
  ]) {
    const e = await createTestApp({ FLAGD_WEBHOOKS: typeof bad === 'string' ? `${bad}${SECRET}` : JSON.stringify(bad) }).catch(
      (x: unknown) => x,
    )
    expect(String(e)).toContain('webhooks')
    expect(String(e)).not.toContain(SECRET)
    expect(String(e)).not.toContain('pw@')
  }
})

test('a webhook once keyed by its URL (unnamed, before names were hosts) goes on from its cursor', async () => {
  const r = receiver()
  const dir = tempDir()
  dirs.push(dir)
  try {
    const hooks = JSON.stringify([{ url: r.url, events: ['flag.*'], secret: SECRET }])
    const first = await createTestApp({}, { dataDir: dir })
    await first.req('POST', '/api/flags', { token: first.adminToken, body: { name: 'c/one', type: 'BOOLEAN' } })
    const delivered = first.app.store.committed().revision
    await first.req('PUT', '/api/flags/c/one', { token: first.adminToken, body: { value: true } })
    await first.close()
    apps.splice(apps.indexOf(first), 1)
    // the cursor file as the previous release wrote it: keyed by the URL, at the first change
    writeFileSync(join(dir, 'webhooks.json'), JSON.stringify({ [r.url]: delivered }))
    const again = await createTestApp({ FLAGD_WEBHOOKS: hooks }, { dataDir: dir })
    apps.push(again)
    await until(() => r.got.length >= 1)
    expect(r.got.map((g) => g.body.after?.value)).toEqual([true]) // the change after the cursor, not from the start nor from now
  } finally {
    r.stop()
  }
})

test('a cursor past the log (a backup put back) goes on from the present: the next change is delivered', async () => {
  const r = receiver()
  const dir = tempDir()
  dirs.push(dir)
  try {
    const hooks = JSON.stringify([{ name: 'restored', url: r.url, events: ['flag.*'], secret: SECRET }])
    const first = await createTestApp({}, { dataDir: dir })
    await first.close()
    apps.splice(apps.indexOf(first), 1)
    writeFileSync(join(dir, 'webhooks.json'), JSON.stringify({ restored: 1_000_000 }))
    const again = await createTestApp({ FLAGD_WEBHOOKS: hooks }, { dataDir: dir })
    apps.push(again)
    await again.req('POST', '/api/flags', { token: again.adminToken, body: { name: 'after/restore', type: 'BOOLEAN' } })
    await until(() => r.got.length >= 1)
    expect(r.got.map((g) => g.body.target.name)).toEqual(['after/restore'])
  } finally {
    r.stop()
  }
})

test("a receiver's answer is read only so far: an endless 200 body still counts as delivered, at once", async () => {
  let streams = 0
  const endless = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () => {
      streams++
      const chunk = new Uint8Array(64 * 1024).fill(120)
      return new Response(new ReadableStream({ pull: (c) => c.enqueue(chunk) }), { status: 200 })
    },
  })
  const dir = tempDir()
  dirs.push(dir)
  try {
    // one attempt only, and far less time than the 10 s an attempt may take: only a bounded read finishes
    const a = await createTestApp(
      { FLAGD_WEBHOOKS: JSON.stringify([{ name: 'big', url: `http://127.0.0.1:${endless.port}/`, events: ['flag.*'], secret: SECRET }]) },
      { dataDir: dir, webhookRetryDelaysMs: [] },
    )
    apps.push(a)
    await a.req('POST', '/api/flags', { token: a.adminToken, body: { name: 'big/answer', type: 'BOOLEAN' } })
    let text = ''
    for (let i = 0; i < 150 && !text.includes('webhook="big",outcome="delivered"'); i++) {
      text = (await a.req('GET', '/metrics')).text
      if (!text.includes('outcome="delivered"')) await Bun.sleep(20)
    }
    expect(text).toContain('flagd_webhook_deliveries_total{webhook="big",outcome="delivered"} 1')
    expect(streams).toBe(1)
  } finally {
    endless.stop(true)
  }
})

test('segment changes are delivered as segment.* events, and the flags they move as flag.updated', async () => {
  const r = receiver()
  const dir = tempDir()
  dirs.push(dir)
  try {
    const env = {
      FLAGD_WEBHOOKS: JSON.stringify([{ name: 'ci', url: r.url, events: ['segment.*', 'flag.updated'], secret: SECRET }]),
    }
    const a = await createTestApp(env, { dataDir: dir, webhookRetryDelaysMs: [20, 40, 80] })
    apps.push(a)
    const beta = { rule: { in: [{ var: 'email' }, ['a@x.test', 'b@x.test']] } }
    expect((await a.req('PUT', '/api/segments/beta', { token: a.adminToken, body: beta })).status).toBe(201)
    const flag = { name: 's/f', type: 'BOOLEAN', variants: { on: true, off: false }, targeting: { if: [{ $ref: 'beta' }, 'on', 'off'] } }
    expect((await a.req('POST', '/api/flags', { token: a.adminToken, body: flag })).status).toBe(201)
    const changed = { rule: { in: [{ var: 'email' }, ['a@x.test']] } }
    expect((await a.req('PUT', '/api/segments/beta', { token: a.adminToken, body: changed })).status).toBe(200)
    expect((await a.req('DELETE', '/api/flags/s/f', { token: a.adminToken })).status).toBe(200)
    expect((await a.req('DELETE', '/api/segments/beta', { token: a.adminToken })).status).toBeLessThan(300)
    // deliveries keep the order of the changes: a last, known change proves nothing else came between
    expect((await a.req('PUT', '/api/segments/sentinel', { token: a.adminToken, body: beta })).status).toBe(201)
    await until(() => r.got.some((g) => g.body.target.name === 'sentinel'))
    expect(r.state.badSignatures).toBe(0)
    expect(r.got.map((g) => `${g.event} ${g.body.target.name}`)).toEqual([
      'segment.created beta',
      'segment.updated beta',
      'flag.updated s/f',
      'segment.deleted beta',
      'segment.created sentinel',
    ])
  } finally {
    r.stop()
  }
})

test('change requests are delivered as change-request.* events, a failed apply as change-request.failed', async () => {
  const r = receiver()
  const dir = tempDir()
  dirs.push(dir)
  try {
    const env = { FLAGD_WEBHOOKS: JSON.stringify([{ name: 'ci', url: r.url, events: ['change-request.*'], secret: SECRET }]) }
    const a = await createTestApp(env, { dataDir: dir, webhookRetryDelaysMs: [20, 40, 80] })
    apps.push(a)
    const admin = (method: string, path: string, body?: unknown) => a.req(method, path, { token: a.adminToken, body })
    expect((await admin('POST', '/api/flags', { name: 'w/f', type: 'INTEGER', value: 1 })).status).toBe(201)
    const request = { environment: 'development', title: 'raise', changes: [{ flag: 'w/f', set: { value: 2 } }] }
    const applied = (await admin('POST', '/api/change-requests', request)).body.id
    expect((await admin('POST', `/api/change-requests/${applied}/apply`)).body.state).toBe('applied')
    const stale = (await admin('POST', '/api/change-requests', { ...request, title: 'stale' })).body.id
    expect((await admin('PUT', '/api/flags/w/f', { value: 9 })).status).toBe(200)
    expect((await admin('POST', `/api/change-requests/${stale}/apply`)).status).toBe(409)
    await until(() => r.got.some((g) => g.event === 'change-request.failed'))
    expect(r.state.badSignatures).toBe(0)
    expect(r.got.map((g) => `${g.event} ${g.body.target.name}`)).toEqual([
      'change-request.created raise',
      'change-request.applied raise',
      'change-request.created stale',
      'change-request.failed stale',
    ])
  } finally {
    r.stop()
  }
})
