/**
 * The one router (src/http/router.ts) on its own: which pattern a path reaches, the 405 of a pattern
 * and the 404, with handlers that only say who they are. What the API answers through it is tested
 * route by route elsewhere, in-process and over a socket, which both go through this router.
 */

import { describe, expect, test } from 'bun:test'
import type { RouteHandler } from '../../src/http/pipeline.ts'
import { createRouter } from '../../src/http/router.ts'

const says =
  (name: string): RouteHandler =>
  () =>
    new Response(name)

const router = createRouter(
  [
    { method: 'GET', path: '/', handler: says('root') },
    { method: 'GET', path: '/health', handler: says('health') },
    { method: 'GET', path: '/api/flags', handler: says('list') },
    { method: 'POST', path: '/api/flags', handler: says('create') },
    { method: 'GET', path: '/api/flags/*', handler: says('flag') },
    { method: 'DELETE', path: '/api/flags/*', handler: says('delete flag') },
    { method: 'GET', path: '/api/users/:userId', handler: says('user') },
    { method: 'PATCH', path: '/api/users/:userId', handler: says('update user') },
    { method: 'GET', path: '/api/users/me', handler: says('me') },
    { method: 'GET', path: '/ui/', handler: says('ui') },
    { method: 'GET', path: '/ui/*', handler: says('ui page') },
    { method: 'GET', path: '/ui/assets/:file', handler: says('asset') },
  ],
  {
    methodNotAllowed: (path, allow) => () => new Response(`405 ${path} ${allow.join(',')}`),
    notFound: () => new Response('404'),
  },
)

const ask = async (method: string, url: string) => (await router(new Request(`http://x${url}`, { method }), null)).text()

describe('patterns', () => {
  test.each([
    ['/', 'root'],
    ['/health', 'health'],
    ['/health?verbose=1', 'health'],
    ['/api/flags', 'list'],
    ['/api/flags/a', 'flag'],
    ['/api/flags/a/b/c', 'flag'],
    ['/api/flags/a%2Fb', 'flag'],
    ['/api/users/usr_1', 'user'],
    ['/api/users/me', 'me'],
    ['/ui/', 'ui'],
    ['/ui/flags/x', 'ui page'],
    ['/ui/assets/app.js', 'asset'],
    ['/ui/assets/a/b', 'ui page'],
  ])('GET %s reaches %s', async (path, name) => {
    expect(await ask('GET', path)).toBe(name)
  })

  test('the most specific pattern wins: static, then a parameter, then a wildcard', async () => {
    expect(await ask('GET', '/api/users/me')).toBe('me')
    expect(await ask('GET', '/ui/assets/x')).toBe('asset')
    expect(await ask('GET', '/ui/assets/')).toBe('ui page') // a parameter is never empty
  })

  test('a trailing slash is insignificant, unless a wildcard takes it', async () => {
    expect(await ask('GET', '/health/')).toBe('health')
    expect(await ask('GET', '/api/flags/')).toBe('list')
    expect(await ask('POST', '/api/flags/')).toBe('create')
    expect(await ask('GET', '/api/users/usr_1/')).toBe('user')
    expect(await ask('GET', '/ui')).toBe('ui')
    expect(await ask('GET', '/api/flags/a/')).toBe('flag')
    expect(await ask('GET', '/health//')).toBe('404')
  })

  test('no case folding, no decoding, no prefix, no Host', async () => {
    expect(await ask('GET', '/Health')).toBe('404')
    expect(await ask('GET', '/%68ealth')).toBe('404')
    expect(await ask('GET', '/zz/api/flags/a')).toBe('404')
    expect(await ask('GET', '//health')).toBe('404')
    const odd = await router(new Request('http://h/api/flags/a', { headers: { host: 'x' } }), null)
    expect(await odd.text()).toBe('flag')
  })
})

describe('methods', () => {
  test('HEAD is answered by GET', async () => {
    expect(await ask('HEAD', '/health')).toBe('health')
    expect(await ask('HEAD', '/api/flags/a')).toBe('flag')
  })

  test("another method is the pattern's 405, listing the methods it takes", async () => {
    expect(await ask('DELETE', '/health')).toBe('405 /health GET')
    expect(await ask('PUT', '/api/flags')).toBe('405 /api/flags GET,POST')
    expect(await ask('POST', '/api/flags/a')).toBe('405 /api/flags/* DELETE,GET')
    expect(await ask('DELETE', '/api/users/me')).toBe('405 /api/users/me GET')
    expect(await ask('OPTIONS', '/api/users/u1')).toBe('405 /api/users/:userId GET,PATCH')
  })

  test('a path no pattern takes is a 404 whatever the method', async () => {
    for (const method of ['GET', 'POST', 'OPTIONS', 'TRACE']) expect(await ask(method, '/nope')).toBe('404')
    expect(await ask('GET', '/api/users/a/b')).toBe('404')
  })

  test('two handlers for one method and path are refused when the table is built', () => {
    const twice = { method: 'GET', path: '/a', handler: says('a') }
    expect(() => createRouter([twice, twice], { methodNotAllowed: () => says('405'), notFound: says('404') })).toThrow(/two handlers/)
  })
})
