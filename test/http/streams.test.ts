/** docs/api.md#conventions: the OFREP event stream and the management stream, read as a client reads them. */

import { afterAll, beforeAll, expect, test } from 'bun:test'
import { eventually, wakeSignal } from '../helpers/eventually.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let t: TestApp
beforeAll(async () => {
  t = await createTestApp({ FLAGD_STREAMS_HEARTBEAT_SECONDS: '1' })
  for (const name of ['s/a', 's/b', 'x/c']) await t.req('POST', '/api/flags', { token: t.adminToken, body: { name, type: 'BOOLEAN' } })
})
afterAll(() => t.close())

/** An open event stream: its status, and the text received so far. */
async function open(path: string, headers: Record<string, string> = {}) {
  const res = await t.app.http.handle(new Request(`http://localhost${path}`, { headers }))
  let text = ''
  let done = false
  const arrived = wakeSignal() // fired by each chunk: until() looks again
  const reader = res.body?.getReader()
  const pump = (async () => {
    if (!reader) return
    const decoder = new TextDecoder()
    for (;;) {
      const { value, done: end } = await reader.read()
      if (end) break
      text += decoder.decode(value)
      arrived.fire()
    }
    done = true
  })()
  return {
    res,
    get text() {
      return text
    },
    get done() {
      return done
    },
    /** Waits until `pattern` has been received, looking again at each chunk (20 s against a hang). */
    async until(pattern: RegExp | string): Promise<string> {
      const seen = () => (typeof pattern === 'string' ? text.includes(pattern) : pattern.test(text))
      await eventually(seen, {
        wakeOn: arrived.wakeOn,
        what: () => `not received: ${pattern}; got ${JSON.stringify(text)}`,
      })
      return text
    },
    close: () => reader?.cancel().catch(() => {}),
    pump,
  }
}

const makeToken = async (body: Record<string, unknown>) =>
  (await t.req('POST', '/api/tokens', { token: t.adminToken, body })).body as { token: string; id: string }
const change = (name: string, value: boolean) => t.req('PUT', `/api/flags/${name}`, { token: t.adminToken, body: { value } })

test('OFREP stream: an event with an increasing id after each committed change, heartbeats in between', async () => {
  const app = await makeToken({ name: 'ofrep-stream', permissions: ['flag:evaluate'] })
  const s = await open('/ofrep/v1/events', { 'x-api-key': app.token })
  expect(s.res.status).toBe(200)
  expect(s.res.headers.get('content-type')).toStartWith('text/event-stream')
  expect(s.res.headers.get('x-request-id')).toBeString()
  await change('s/a', true)
  await s.until(/data: \{"type":"refetchEvaluation"/)
  await change('s/b', true)
  await s.until(/(id: \d+\n[^\n]*refetchEvaluation[^\n]*\n\n[\s\S]*){2}/)
  const events = [...s.text.matchAll(/id: (\d+)\ndata: (.*)\n/g)].map((m) => ({ id: Number(m[1]), data: JSON.parse(m[2] as string) }))
  expect(events.length).toBeGreaterThanOrEqual(2)
  expect(events[1]!.id).toBeGreaterThan(events[0]!.id)
  expect(events[1]!.data.etag).not.toBe(events[0]!.data.etag)
  expect(typeof events[0]!.data.lastModified).toBe('number')
  await s.until(': ping')
  await s.close()
})

test('OFREP stream by ticket: the ticket from the bulk answer opens it; revoking the token closes it and the ticket', async () => {
  const app = await makeToken({ name: 'browser', permissions: ['flag:evaluate'] })
  const bulk = await t.req('POST', '/ofrep/v1/evaluate/flags', { headers: { 'x-api-key': app.token }, body: {} })
  const uri = bulk.body.eventStreams[0].endpoint.requestUri as string
  const s = await open(uri)
  expect(s.res.status).toBe(200)
  await change('s/a', false)
  await s.until('refetchEvaluation')
  expect((await open(`${uri}x`)).res.status).toBe(401)
  expect((await open('/ofrep/v1/events?ticket=bm9wZQ.bm9wZQ')).res.status).toBe(401)
  expect((await open('/ofrep/v1/events')).res.status).toBe(401)
  await t.req('DELETE', `/api/tokens/${app.id}`, { token: t.adminToken })
  await s.pump // closed at the next heartbeat
  expect(s.done).toBe(true)
  expect((await open(uri)).res.status).toBe(401)
})

test('OFREP stream: a scoped token hears only changes to its flags', async () => {
  const scoped = await makeToken({ name: 'scoped-stream', permissions: ['flag:evaluate'], flagPrefixes: ['s/'] })
  const s = await open('/ofrep/v1/events', { authorization: `Bearer ${scoped.token}` })
  await change('x/c', true)
  await change('s/b', false)
  await s.until('refetchEvaluation')
  expect(s.text.match(/refetchEvaluation/g)).toHaveLength(1)
  await s.close()
})

test('OFREP stream needs flag:evaluate', async () => {
  const writer = await makeToken({ name: 'no-evaluate', permissions: ['flag:write'] })
  const res = await open('/ofrep/v1/events', { 'x-api-key': writer.token })
  expect(res.res.status).toBe(403)
})

test('management stream: one event per change with name, revision, previousName, actor, at', async () => {
  const s = await open('/api/events', { authorization: `Bearer ${t.adminToken}` })
  expect(s.res.status).toBe(200)
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'm/new', type: 'INTEGER' } })
  await t.req('PUT', '/api/flags/m/new', { token: t.adminToken, body: { name: 'm/renamed' } })
  await t.req('DELETE', '/api/flags/m/renamed', { token: t.adminToken })
  await s.until('event: flag.deleted')
  const events = [...s.text.matchAll(/id: (\d+)\nevent: (\S+)\ndata: (.*)\n/g)].map((m) => ({
    id: Number(m[1]),
    type: m[2],
    data: JSON.parse(m[3] as string),
  }))
  expect(events.map((e) => e.type)).toEqual(['flag.created', 'flag.updated', 'flag.deleted'])
  expect(events[0]!.data).toEqual({
    name: 'm/new',
    revision: 1,
    actor: { type: 'user', id: expect.any(String), name: 'admin' },
    at: expect.stringMatching(/Z$/),
  })
  expect(events[1]!.data).toMatchObject({ name: 'm/renamed', previousName: 'm/new', revision: 2 })
  expect(events[2]!.data).toMatchObject({ name: 'm/renamed', revision: 2 })
  expect(events[1]!.id).toBeGreaterThan(events[0]!.id)
  await s.close()

  // reconnecting with Last-Event-ID gets what was missed first
  const resumed = await open('/api/events', { authorization: `Bearer ${t.adminToken}`, 'last-event-id': String(events[0]!.id) })
  await resumed.until('event: flag.deleted')
  expect([...resumed.text.matchAll(/event: (\S+)/g)].map((m) => m[1])).toEqual(['flag.updated', 'flag.deleted'])
  await resumed.close()
})

test('management stream with ?segments=true: segment changes too, in commit order with the flags they move; not without it', async () => {
  const plain = await open('/api/events', { authorization: `Bearer ${t.adminToken}` })
  const s = await open('/api/events?segments=true', { authorization: `Bearer ${t.adminToken}` })
  expect(s.res.status).toBe(200)
  const seg = (rule: unknown) => t.req('PUT', '/api/segments/crew', { token: t.adminToken, body: { rule } })
  await seg({ '==': [{ var: 'team' }, 'a'] })
  await t.req('POST', '/api/flags', {
    token: t.adminToken,
    body: { name: 'seg/uses', type: 'BOOLEAN', targeting: { if: [{ $ref: 'crew' }, 'true'] } },
  })
  await seg({ '==': [{ var: 'team' }, 'b'] })
  await t.req('DELETE', '/api/flags/seg/uses', { token: t.adminToken })
  await t.req('DELETE', '/api/segments/crew', { token: t.adminToken })
  await s.until('event: segment.deleted')
  const kinds = (text: string) => [...text.matchAll(/event: (\S+)\ndata: (.*)\n/g)].map((m) => `${m[1]} ${JSON.parse(m[2] as string).name}`)
  expect(kinds(s.text)).toEqual([
    'segment.created crew',
    'flag.created seg/uses',
    'segment.updated crew',
    'flag.updated seg/uses',
    'flag.deleted seg/uses',
    'segment.deleted crew',
  ])
  // events keep commit order: a last flag change, once seen, proves no segment event came before it
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'seg/sentinel', type: 'BOOLEAN' } })
  await plain.until('seg/sentinel')
  await s.until('seg/sentinel')
  expect(kinds(plain.text)).toEqual([
    'flag.created seg/uses',
    'flag.updated seg/uses',
    'flag.deleted seg/uses',
    'flag.created seg/sentinel',
  ])
  // catch-up from Last-Event-ID carries segments too, when asked for
  const firstId = Number(/id: (\d+)/.exec(s.text)?.[1])
  const resumed = await open('/api/events?segments=true', { authorization: `Bearer ${t.adminToken}`, 'last-event-id': String(firstId) })
  await resumed.until('seg/sentinel')
  expect(kinds(resumed.text)).toEqual(kinds(s.text).slice(1))
  for (const x of [plain, s, resumed]) await x.close()
})

test('management stream: a catch-up of many pages arrives whole and in order, then changes made meanwhile, none twice', async () => {
  const first = await open('/api/events', { authorization: `Bearer ${t.adminToken}` })
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'many/f', type: 'INTEGER' } })
  const start = Number((await first.until(/id: (\d+)/)).match(/id: (\d+)/)?.[1])
  await first.close()
  for (let i = 1; i <= 1200; i++) await t.req('PUT', '/api/flags/many/f', { token: t.adminToken, body: { value: i } })
  // a change racing the reconnection: it must arrive exactly once, after the catch-up
  const [resumed] = await Promise.all([
    open('/api/events', { authorization: `Bearer ${t.adminToken}`, 'last-event-id': String(start) }),
    t.req('PUT', '/api/flags/many/f', { token: t.adminToken, body: { value: 5000 } }),
  ])
  await resumed.until('"revision":1202')
  const ids = [...resumed.text.matchAll(/id: (\d+)/g)].map((m) => Number(m[1]))
  const revisions = [...resumed.text.matchAll(/"revision":(\d+)/g)].map((m) => Number(m[1]))
  expect(revisions).toEqual(Array.from({ length: 1201 }, (_, i) => i + 2))
  expect(ids).toEqual([...ids].sort((a, b) => a - b))
  expect(new Set(ids).size).toBe(ids.length)
  await resumed.close()
}, 30_000) // 1,200 durable writes first: seconds on a busy CI machine

test('management stream: a scoped token sees renames across its prefixes as creations and deletions', async () => {
  const scoped = await makeToken({ name: 'scoped-mgmt', permissions: ['flag:read'], flagPrefixes: ['in/'] })
  const s = await open('/api/events', { 'x-api-key': scoped.token })
  await t.req('POST', '/api/flags', { token: t.adminToken, body: { name: 'out/a', type: 'BOOLEAN' } })
  await t.req('PUT', '/api/flags/out/a', { token: t.adminToken, body: { name: 'in/a' } })
  await t.req('PUT', '/api/flags/in/a', { token: t.adminToken, body: { name: 'out/b' } })
  await s.until('flag.deleted')
  const events = [...s.text.matchAll(/event: (\S+)\ndata: (.*)\n/g)].map((m) => [m[1], JSON.parse(m[2] as string).name])
  expect(events).toEqual([
    ['flag.created', 'in/a'],
    ['flag.deleted', 'in/a'],
  ])
  expect(s.text).not.toContain('out/')
  await s.close()
})

test('management stream needs flag:read and refuses unknown query parameters', async () => {
  const evaluator = await makeToken({ name: 'evaluate-only', permissions: ['flag:evaluate'] })
  expect((await open('/api/events', { 'x-api-key': evaluator.token })).res.status).toBe(403)
  expect((await open('/api/events?x=1', { authorization: `Bearer ${t.adminToken}` })).res.status).toBe(400)
})

test('closing the streams (shutdown) ends every open stream', async () => {
  const c = await createTestApp()
  try {
    const res = await c.app.http.handle(
      new Request('http://localhost/api/events', { headers: { authorization: `Bearer ${c.adminToken}` } }),
    )
    const reader = res.body!.getReader()
    await reader.read() // the opening comment
    c.app.http.closeStreams()
    expect((await reader.read()).done).toBe(true)
    const late = await c.app.http.handle(
      new Request('http://localhost/api/events', { headers: { authorization: `Bearer ${c.adminToken}` } }),
    )
    expect((await late.text()).length).toBe(0)
  } finally {
    await c.close()
  }
})

test('management stream: a reader of one environment hears no change confined to another, whoever listened first', async () => {
  for (const name of ['staging-ev', 'production-ev'])
    expect((await t.req('PUT', `/api/environments/${name}`, { token: t.adminToken, body: {} })).status).toBe(201)
  const staging = await makeToken({ name: 'staging reader', permissions: ['flag:read@staging-ev'], environment: 'staging-ev' })
  // an unconfined listener first, so its rendering exists before the confined one's is asked for
  const admin = await open('/api/events', { authorization: `Bearer ${t.adminToken}` })
  const reader = await open('/api/events', { 'x-api-key': staging.token })
  expect(reader.res.status).toBe(200)
  expect((await t.req('PUT', '/api/flags/s/a?environment=production-ev', { token: t.adminToken, body: { value: true } })).status).toBe(200)
  expect((await t.req('PUT', '/api/flags/s/b?environment=staging-ev', { token: t.adminToken, body: { value: true } })).status).toBe(200)
  await admin.until('"name":"s/b"')
  expect(admin.text).toContain('"name":"s/a"')
  // the stream is in commit order: once s/b's event is here, s/a's would have come before it
  await reader.until('"name":"s/b"')
  expect(reader.text).not.toContain('"name":"s/a"')
  await admin.close()
  await reader.close()

  // resuming with Last-Event-ID replays from the audit log, filtered as the live stream was
  const before = Number(/id: (\d+)\nevent: \S+\ndata: \{"name":"s\/a"/.exec(admin.text)?.[1]) - 1
  const resumed = await open('/api/events', { 'x-api-key': staging.token, 'last-event-id': String(before) })
  await resumed.until('"name":"s/b"')
  expect(resumed.text).not.toContain('"name":"s/a"')
  await resumed.close()
})
