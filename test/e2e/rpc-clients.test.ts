/**
 * The evaluation service against gRPC's C core (Python's grpcio, what the Python, PHP, Ruby and C++
 * flagd providers are built on), a second HTTP/2 implementation beside grpc-js: v1 and v2 answers
 * with a token in the metadata, UNAUTHENTICATED without one, and an EventStream told of a change.
 * Debian's `python3-grpcio` is needed; `.ci/run` installs it and sets TEST_REQUIRE_GRPCIO=1.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { evaluationMethod } from '../../src/sync/evaluation-protocol.ts'
import { freePort } from '../helpers/daemon.ts'
import { type AdminDaemon, startAdminDaemon } from '../helpers/test-daemon.ts'
import { testkitFlags } from '../helpers/testkit.ts'

setDefaultTimeout(30_000)

// the system's Python, where Debian's package puts grpcio
const PYTHON = '/usr/bin/python3'
const hasGrpcio = Bun.spawnSync([PYTHON, '-c', 'import grpc'], { stdout: 'ignore', stderr: 'ignore' }).exitCode === 0
if (!hasGrpcio && process.env.TEST_REQUIRE_GRPCIO === '1')
  throw new Error('python3-grpcio is required here (TEST_REQUIRE_GRPCIO=1): apt-get install python3-grpcio')

/** Calls `method` with `request` over grpcio and prints one JSON line per answer: hex, or the status. */
const CLIENT = `
import grpc, json, sys
port, token, path, kind, request = sys.argv[1:6]
channel = grpc.insecure_channel('127.0.0.1:' + port)
metadata = [('authorization', 'Bearer ' + token)] if token else []
call = (channel.unary_unary if kind == 'unary' else channel.unary_stream)(path)
try:
    answers = call(bytes.fromhex(request), metadata=metadata, timeout=20)
    for answer in ([answers] if kind == 'unary' else answers):
        print(json.dumps({'hex': answer.hex()}), flush=True)
except grpc.RpcError as e:
    print(json.dumps({'code': e.code().name, 'details': e.details()}), flush=True)
`

const rpcPort = freePort()
let d: AdminDaemon | undefined
let token: string

beforeAll(async () => {
  if (!hasGrpcio) return
  d = await startAdminDaemon({ FLAGD_EVALUATION_PORT: String(rpcPort) })
  expect((await d.api('PUT', '/api/migrations', testkitFlags())).status).toBe(200)
  token = await d.token('python', ['flag:evaluate'])
})
afterAll(async () => {
  await d?.stop()
})

const python = (args: string[]) => Bun.spawn([PYTHON, '-c', CLIENT, String(rpcPort), ...args], { stdout: 'pipe', stderr: 'pipe' })

test.skipIf(!hasGrpcio)('grpcio: ResolveBoolean over v1 and v2 with a token; without one, UNAUTHENTICATED', async () => {
  for (const version of ['v1', 'v2'] as const) {
    const m = evaluationMethod(version, 'ResolveBoolean')
    const request = Buffer.from(m.encodeRequest({ flagKey: 'boolean-flag', context: { fields: {} } })).toString('hex')
    const p = python([token, m.path, 'unary', request])
    const out = JSON.parse(await new Response(p.stdout).text()) as { hex: string }
    expect(await p.exited, await new Response(p.stderr).text()).toBe(0)
    expect(m.decodeResponse(Buffer.from(out.hex, 'hex'))).toMatchObject({ value: true, variant: 'on', reason: 'STATIC' })
  }
  const m = evaluationMethod('v2', 'ResolveBoolean')
  const p = python(['', m.path, 'unary', Buffer.from(m.encodeRequest({ flagKey: 'boolean-flag' })).toString('hex')])
  expect(JSON.parse(await new Response(p.stdout).text())).toMatchObject({ code: 'UNAUTHENTICATED' })
})

test.skipIf(!hasGrpcio)('grpcio: an EventStream is ready at once and told of a change with the flag key', async () => {
  const m = evaluationMethod('v2', 'EventStream')
  const p = python([token, m.path, 'stream', ''])
  const lines = (async function* () {
    let text = ''
    for await (const chunk of p.stdout as ReadableStream<Uint8Array>) {
      text += new TextDecoder().decode(chunk)
      let at = text.indexOf('\n')
      while (at >= 0) {
        yield m.decodeResponse(Buffer.from((JSON.parse(text.slice(0, at)) as { hex: string }).hex, 'hex')) as {
          type: string
          data?: { fields?: Record<string, { structValue?: { fields?: Record<string, unknown> } }> }
        }
        text = text.slice(at + 1)
        at = text.indexOf('\n')
      }
    }
  })()
  try {
    expect((await lines.next()).value?.type).toBe('provider_ready')
    const created = await d!.api('POST', '/api/flags', { name: 'python/live', type: 'BOOLEAN', value: true })
    expect(created.status).toBe(201)
    const event = (await lines.next()).value
    expect(event?.type).toBe('configuration_change')
    expect(Object.keys(event?.data?.fields?.flags?.structValue?.fields ?? {})).toEqual(['python/live'])
  } finally {
    p.kill()
  }
})
