/**
 * The sync bench's load generator, in a process of its own: holds N `SyncFlags` streams, each on a
 * connection of its own as N in-process providers would, and notes when each message arrives. It is
 * to gRPC what wrk is to HTTP: plain HTTP/2 (`node:http2`) and the protocol's own message decoding
 * (protobufjs reading `sync.proto`), without a gRPC client library's per-call machinery, so that
 * the time measured is the daemon's rather than the clients'. Plain JavaScript, so that Node runs it
 * (Bun too, where Node is missing).
 *
 * Usage: `node bench/sync-stream-load.mjs <port> <api token> <streams>`. It prints `ready` once
 * every stream has its first document; then, for each line `dump` on stdin, one line of JSON: the
 * arrival times (epoch milliseconds, fractional) of the messages since the last dump, and the
 * number of streams that failed. `quit` ends it.
 */

import http2 from 'node:http2'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import protobuf from 'protobufjs'

const [port, token, count] = [Number(process.argv[2]), process.argv[3], Number(process.argv[4])]
const root = protobuf.loadSync(join(dirname(fileURLToPath(import.meta.url)), '../src/sync/sync.proto'))
const Response = root.lookupType('flagd.sync.v1.SyncFlagsResponse')
const Request = root.lookupType('flagd.sync.v1.SyncFlagsRequest')

const body = Request.encode(Request.fromObject({ providerId: 'bench', selector: '' })).finish()
const framed = Buffer.concat([Buffer.from([0, 0, 0, 0, body.length]), body]) // gRPC framing: uncompressed, length
const now = () => performance.timeOrigin + performance.now()

let arrivals = []
let documents = 0
let failed = 0
const sessions = []
for (let i = 0; i < count; i++) {
  const session = http2.connect(`http://127.0.0.1:${port}`)
  session.on('error', () => {})
  sessions.push(session)
  const stream = session.request({
    ':method': 'POST',
    ':path': '/flagd.sync.v1.FlagSyncService/SyncFlags',
    'content-type': 'application/grpc',
    te: 'trailers',
    authorization: `Bearer ${token}`,
  })
  stream.end(framed)
  let pending = Buffer.alloc(0)
  stream.on('data', (chunk) => {
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk])
    while (pending.length >= 5) {
      const length = pending.readUInt32BE(1)
      if (pending.length < 5 + length) break
      const message = Response.decode(pending.subarray(5, 5 + length))
      pending = pending.subarray(5 + length)
      if (typeof message.flagConfiguration !== 'string' || message.flagConfiguration === '') continue
      documents++
      arrivals.push(now())
    }
  })
  stream.on('error', () => failed++)
  stream.on('trailers', (trailers) => {
    if (trailers['grpc-status'] !== '0') failed++
  })
}

const waiting = setInterval(() => {
  if (documents + failed < count) return
  clearInterval(waiting)
  arrivals = []
  console.log(failed === 0 ? 'ready' : `failed ${failed}`)
}, 5)

let input = ''
process.stdin.on('data', (data) => {
  input += data
  for (let end = input.indexOf('\n'); end >= 0; end = input.indexOf('\n')) {
    const line = input.slice(0, end).trim()
    input = input.slice(end + 1)
    if (line === 'dump') {
      console.log(JSON.stringify({ arrivals, failed }))
      arrivals = []
    } else if (line === 'quit') {
      for (const s of sessions) s.destroy()
      process.exit(0)
    }
  }
})
