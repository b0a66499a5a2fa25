/**
 * The floor for `bun run bench` (docs/performance.md): a bare Bun.serve that does, for one route,
 * only what the contract requires of every server of it, each in the cheapest way Bun offers, with
 * flagd's own logic reduced to a Map lookup. flagd's ratio to this server shows how much of the
 * distance to a bare `Bun.serve` is flagd's code and how much is the price of the contract on this
 * runtime (reading a request header makes Bun build all of them; `request.url`; four or five response
 * headers instead of one; an access line and a metric per request).
 *
 * `bun bench/floor-server.ts <port> <answer-file> health`: `GET /health`.
 * `bun bench/floor-server.ts <port> <answer-file> read <credential> <flag> <etag>`: `GET /api/flags/{name}`,
 * the credential (the value of `Authorization`, or else of `X-API-Key`) already verified: a Map from
 * header value to principal, as flagd's credential cache; `If-None-Match` honoured, the flag's JSON
 * already serialized.
 *
 * Both refuse a query string (unknown parameters are a 400), echo a well-formed `X-Request-Id` or
 * make one, answer with the contract's headers, time the request, count it under its route and status,
 * and write an access line in batches of up to 200 ms, as flagd does.
 */

const [portArg, file, mode, credential, flagName, etag] = process.argv.slice(2)
const body = await Bun.file(file as string).text()
const JSON_TYPE = 'application/json; charset=utf-8'
const CLIENT_ID = /^[A-Za-z0-9._-]{1,128}$/
const ID_PREFIX = crypto.randomUUID().slice(0, 18)
let idCounter = 0

interface Line {
  path: string
  status: number
  ms: number
  id: string
  user: string | undefined
  at: number
}
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/
let pending: Line[] = []
let isoAt = 0
let iso = ''
const sink = Bun.stdout.writer({ highWaterMark: 256 * 1024 })
function drain(): void {
  let text = ''
  for (const e of pending) {
    const user = e.user === undefined ? '' : `,"userId":"${e.user}"`
    if (e.at !== isoAt) iso = new Date((isoAt = e.at)).toISOString()
    // a client chooses the path: a JSON log line must escape it when needed
    const path = PLAIN.test(e.path) ? `"${e.path}"` : JSON.stringify(e.path)
    text += `{"level":30,"time":"${iso}","service":"flagd","method":"GET","path":${path},"status":${e.status},"durationMs":${e.ms},"requestId":"${e.id}"${user},"msg":"request"}\n`
  }
  pending = []
  sink.write(text)
}
setInterval(() => {
  drain()
  void sink.flush()
}, 200).unref()

// one counter and one duration sum per status: the least a request metric can keep
const counts = new Map<number, { n: number; seconds: number }>()
function done(path: string, status: number, started: number, id: string, user: string | undefined, response: Response): Response {
  const ms = performance.now() - started
  const series = counts.get(status) ?? counts.set(status, { n: 0, seconds: 0 }).get(status)
  if (series) {
    series.n++
    series.seconds += ms / 1000
  }
  pending.push({ path, status, ms: Math.round(ms * 10) / 10, id, user, at: Date.now() })
  if (pending.length >= 512) drain()
  return response
}

// headers built once, only the request id set per answer: a Response copies them, and that is
// cheaper than building them from an object literal (as flagd's json-response.ts does)
const JSON_HEADERS = new Headers({
  'content-type': JSON_TYPE,
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-request-id': '',
})
const answer = (status: number, text: string | null, id: string) => {
  JSON_HEADERS.set('x-request-id', id)
  return new Response(text, { status, headers: JSON_HEADERS })
}
const TAGGED = new Headers({
  'content-type': JSON_TYPE,
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'x-request-id': '',
  etag: etag ?? '',
})
const UNCHANGED = new Headers({ 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-request-id': '', etag: etag ?? '' })
const flagAnswer = (status: number, text: string | null, id: string) => {
  const headers = status === 304 ? UNCHANGED : TAGGED
  headers.set('x-request-id', id)
  return new Response(text, { status, headers })
}
const requestId = (headers: Headers) => {
  const given = headers.get('x-request-id')
  return given !== null && CLIENT_ID.test(given) ? given : `${ID_PREFIX}-${++idCounter}`
}

const FLAGS = '/api/flags/'
// the one flag the bench reads, under the name its path gives, and the one known credential
const flags = new Map<string, { json: string; etag: string }>()
const principals = new Map<string, { user: string; until: number; permissions: Set<string> }>()
if (mode === 'read') {
  principals.set(credential as string, { user: 'u_floor', until: Number.POSITIVE_INFINITY, permissions: new Set(['flag:read']) })
  flags.set(flagName as string, { json: body, etag: etag as string })
}

function health(request: Request): Response {
  const started = performance.now()
  if (request.url.includes('?')) return answer(400, '{"error":"unknown query parameter"}', requestId(request.headers))
  const id = requestId(request.headers)
  return done('/health', 200, started, id, undefined, answer(200, body, id))
}

function read(request: Request): Response {
  const started = performance.now()
  const url = request.url
  const headers = request.headers
  const id = requestId(headers)
  if (url.includes('?')) return answer(400, '{"error":"unknown query parameter"}', id)
  const path = url.slice(url.indexOf('/', url.indexOf('//') + 2))
  const value = headers.get('authorization') ?? headers.get('x-api-key')
  const principal = value === null ? undefined : principals.get(value)
  if (principal === undefined || Date.now() >= principal.until)
    return done(path, 401, started, id, undefined, answer(401, '{"error":"unauthorized"}', id))
  if (!principal.permissions.has('flag:read')) return done(path, 403, started, id, principal.user, answer(403, '{"error":"forbidden"}', id))
  const name = path.slice(FLAGS.length)
  const flag = flags.get(name)
  if (flag === undefined) return done(path, 404, started, id, principal.user, answer(404, '{"error":"not found"}', id))
  if (headers.get('if-none-match') === flag.etag) return done(path, 304, started, id, principal.user, flagAnswer(304, null, id))
  return done(path, 200, started, id, principal.user, flagAnswer(200, flag.json, id))
}

// Bun's own router, as flagd's fast lanes use; anything else is the 404 a router gives
const options = { hostname: '127.0.0.1', port: Number(portArg), development: false, fetch: () => new Response(null, { status: 404 }) }
if (mode === 'read') Bun.serve({ ...options, routes: { '/api/flags/*': { GET: read } } })
else Bun.serve({ ...options, routes: { '/health': { GET: health } } })
console.error('ready')

export {}
