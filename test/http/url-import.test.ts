/** docs/migrations.md: import from URL, with address checks on every hop, limits, and a loopback canary. */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Server } from 'bun'
import { fixture } from '../helpers/fixtures.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

let canary: Server<undefined>
let hits = 0
let closedPort: number
const doc = JSON.stringify(fixture('valid-merge.json'))
const flagdDoc = JSON.stringify({
  flags: { 'remote/flag': { state: 'DISABLED', variants: { a: 'x', b: 'y' }, defaultVariant: 'b' } },
  metadata: { environment: 'remote-env' },
})

beforeAll(() => {
  canary = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      hits++
      const url = new URL(req.url)
      switch (url.pathname) {
        case '/doc.json':
          return new Response(doc, { headers: { 'content-type': 'application/json' } })
        case '/flagd.json':
          return new Response(flagdDoc, { headers: { 'content-type': 'application/json' } })
        case '/gzip.json':
          return new Response(Bun.gzipSync(Buffer.from(doc)), {
            headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' },
          })
        case '/big.json':
          return new Response(JSON.stringify({ pad: 'x'.repeat(64 * 1024) }), { headers: { 'content-type': 'application/json' } })
        case '/slow.json':
          await Bun.sleep(3000)
          return new Response(doc)
        case '/html':
          return new Response('<html>secret-body-text</html>', { headers: { 'content-type': 'text/html' } })
        case '/missing':
          return new Response('nope', { status: 404 })
        case '/redirect':
          return Response.redirect(url.searchParams.get('to') ?? '/doc.json', 302)
        case '/loop':
          return Response.redirect(`/loop?n=${Number(url.searchParams.get('n') ?? 0) + 1}`, 302)
        default:
          return new Response('?', { status: 404 })
      }
    },
  })
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
  closedPort = probe.port as number
  probe.stop(true)
})
afterAll(() => canary.stop(true))

const base = () => `http://127.0.0.1:${canary.port}`
const patch = (app: TestApp, url: string, query = '') =>
  app.req('PATCH', `/api/migrations${query}`, { token: app.adminToken, body: { url } })

describe('refused by default', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(() => t.close())

  const vectors = () => [
    `${base()}/doc.json`,
    `http://localhost:${canary.port}/doc.json`,
    `http://2130706433:${canary.port}/doc.json`,
    `http://0x7f000001:${canary.port}/doc.json`,
    `http://0177.0.0.1:${canary.port}/doc.json`,
    `http://127.1:${canary.port}/doc.json`,
    `http://[::1]:${canary.port}/doc.json`,
    `http://[::ffff:127.0.0.1]:${canary.port}/doc.json`,
    `http://[::ffff:7f00:1]:${canary.port}/doc.json`,
    `http://0.0.0.0:${canary.port}/doc.json`,
    `http://10.0.0.1:${canary.port}/doc.json`,
    `http://172.16.0.1/doc.json`,
    `http://192.168.1.1/doc.json`,
    `http://100.64.0.1/doc.json`,
    `http://169.254.169.254/latest/meta-data`,
    `http://[fc00::1]/doc.json`,
    `http://[fe80::1]/doc.json`,
    `http://224.0.0.1/doc.json`,
    `http://255.255.255.255/doc.json`,
    `http://LocalHost:${canary.port}/doc.json`,
    `file:///etc/passwd`,
    `data:application/json,{}`,
    `ftp://example.com/doc.json`,
    `http://user:pw@example.com/doc.json`,
    'not a url',
  ]

  test('25 SSRF vectors are refused with 400 naming url, and the canary is never reached', async () => {
    hits = 0
    for (const url of vectors()) {
      const res = await patch(t, url)
      expect(res.status, url).toBe(400)
      expect(res.body.error.details.field, url).toBe('url')
    }
    expect(hits).toBe(0)
  })

  test('unknown body fields and missing url are 400', async () => {
    expect((await t.req('PATCH', '/api/migrations', { token: t.adminToken, body: { url: base(), force: true } })).status).toBe(400)
    expect((await t.req('PATCH', '/api/migrations', { token: t.adminToken, body: {} })).status).toBe(400)
  })
})

describe('allow-listed loopback', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp({
      FLAGD_IMPORT_ALLOWED_HOSTS: '127.0.0.1, ::1/128',
      FLAGD_IMPORT_URL_TIMEOUT_MS: '1000',
      FLAGD_IMPORT_URL_MAX_BYTES: '32768',
    })
  })
  afterAll(() => t.close())

  test('imports, with query options, decompressing gzip', async () => {
    const dry = await patch(t, `${base()}/doc.json`, '?dryRun=true')
    expect(dry.status).toBe(200)
    expect(dry.body).toMatchObject({ dryRun: true, summary: { created: 3 } })
    const res = await patch(t, `${base()}/gzip.json`)
    expect(res.status).toBe(200)
    expect(res.body.summary.created).toBe(3)
  })

  test('the preview of an update shows each changed field before and after, as for an upload', async () => {
    await patch(t, `${base()}/doc.json`)
    await t.req('PUT', '/api/flags/app/max_retries', { token: t.adminToken, body: { value: 7, description: 'edited' } })
    const dry = await patch(t, `${base()}/doc.json`, '?dryRun=true&diff=true')
    expect(dry.body.changes).toEqual([
      {
        name: 'app/max_retries',
        action: 'update',
        fields: ['description', 'value'],
        diff: { description: { before: 'edited', after: 'Retry budget' }, value: { before: 7, after: 5 } },
      },
    ])
  })

  test('a flagd document imports from a URL too, said so in the result', async () => {
    const res = await patch(t, `${base()}/flagd.json`)
    expect(res.status).toBe(200)
    expect(res.body).toMatchObject({ source: { format: 'flagd', environment: 'remote-env' }, summary: { created: 1 } })
    expect((await t.req('GET', '/api/flags/remote/flag', { token: t.adminToken })).body).toMatchObject({
      type: 'STRING',
      enabled: false,
      value: 'y',
    })
  })

  test('an allowed IP does not allow a name that resolves to it', async () => {
    expect((await patch(t, `http://localhost:${canary.port}/doc.json`)).status).toBe(400)
  })

  test('a redirect to a refused address is refused; the target is never reached', async () => {
    hits = 0
    const res = await patch(t, `${base()}/redirect?to=${encodeURIComponent(`http://localhost:${canary.port}/doc.json`)}`)
    expect(res.status).toBe(400)
    expect(res.body.error.details.field).toBe('url')
    expect(hits).toBe(1)
    const toFile = await patch(t, `${base()}/redirect?to=${encodeURIComponent('file:///etc/passwd')}`)
    expect(toFile.status).toBe(400)
  })

  test('an allowed redirect is followed', async () => {
    const res = await patch(t, `${base()}/redirect?to=/doc.json`, '?dryRun=true')
    expect(res.status).toBe(200)
  })

  test.each([
    ['unreachable', () => `http://127.0.0.1:${closedPort}/doc.json`],
    ['not found', () => `${base()}/missing`],
    ['not JSON', () => `${base()}/html`],
    ['too large', () => `${base()}/big.json`],
    ['too slow', () => `${base()}/slow.json`],
    ['too many redirects', () => `${base()}/loop`],
  ])('%s → 502, the remote body never echoed', async (_name, url) => {
    const res = await patch(t, url())
    expect(res.status).toBe(502)
    expect(res.body.error.code).toBe('UPSTREAM_ERROR')
    expect(res.text).not.toContain('secret-body-text')
  })

  test('an invalid remote document is 400 with every error', async () => {
    const app = await createTestApp({ FLAGD_IMPORT_ALLOWED_HOSTS: '127.0.0.0/8' })
    const bad = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: () => Response.json({ environment: 'x', version: '1.0.0', createdAt: 'yesterday', flags: { a: { type: 'NOPE' } } }),
    })
    const res = await patch(app, `http://127.0.0.1:${bad.port}/`)
    expect(res.status).toBe(400)
    expect(res.body.error.details.errors.map((e: { field: string }) => e.field).sort()).toEqual(['createdAt', 'flags.a.type'])
    bad.stop(true)
    await app.close()
  })
})
