/** cors.ts on its own: `Vary` names Origin exactly once, preflights carry only what a preflight needs. */

import { expect, test } from 'bun:test'
import { createCors } from '../../src/http/cors.ts'

const from = (origin: string | undefined, method = 'GET') =>
  new Request('http://127.0.0.1/api/me', { method, headers: origin ? { origin } : {} })

test('a listed origin: Vary is added to what the answer already varies on, once, however often decorated', () => {
  const cors = createCors(['https://app.example'])!
  const response = new Response('{}', { headers: { vary: 'Accept-Encoding' } })
  cors.decorate(from('https://app.example'), response)
  cors.decorate(from('https://app.example'), response)
  expect(response.headers.get('vary')).toBe('Accept-Encoding, Origin')
  expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example')
  expect(response.headers.get('access-control-expose-headers')).toContain('ETag')
})

test('a preflight names Origin in Vary once and exposes no headers; an unlisted origin still gets Vary', () => {
  const cors = createCors(['https://app.example'])!
  const preflight = from('https://app.example', 'OPTIONS')
  const answer = cors.preflight(preflight, 'req-1')!
  cors.decorate(preflight, answer)
  expect(answer.status).toBe(204)
  expect(answer.headers.get('vary')).toBe('Origin')
  expect(answer.headers.get('access-control-expose-headers')).toBeNull()
  const stranger = new Response('{}')
  cors.decorate(from('https://evil.example'), stranger)
  expect(stranger.headers.get('vary')).toBe('Origin')
  expect(stranger.headers.get('access-control-allow-origin')).toBeNull()
})

test('"*": any origin, and no Vary (the answer is the same for all)', () => {
  const cors = createCors(['*'])!
  const response = new Response('{}')
  cors.decorate(from('https://anything.example'), response)
  expect(response.headers.get('access-control-allow-origin')).toBe('*')
  expect(response.headers.get('vary')).toBeNull()
  expect(createCors([])).toBeUndefined()
})
