/**
 * The flagd drop-in in `bun run bench` (docs/openfeature.md#rpc): flagd's evaluation service over
 * gRPC against OFREP single on the same flag and context, both loaded from this process with the
 * same concurrency, alternated round by round (a ratio and each one's p99); an EventStream fan-out
 * to 500 providers (from a change through the API to the last provider told); and an OTLP request
 * of 1,000 evaluation data points.
 */

import { mkdtempSync } from 'node:fs'
import { join } from 'node:path'
import { credentials, Metadata, makeGenericClientConstructor } from '@grpc/grpc-js'
import { OtlpRequest } from '../src/http/otlp-metrics.ts'
import { evaluationService } from '../src/sync/evaluation-protocol.ts'
import { cpuTime } from './cpu-time.ts'
import { flagDocument, freePort, loginHeaders, type Row, waitFor } from './fixture.ts'
import { token as evaluateToken } from './ofrep.ts'

const ROUNDS = 5
const SECONDS = 2
const CONCURRENCY = 32

type Rpc = {
  ResolveInt(r: object, m: Metadata, done: (err: Error | null) => void): void
  EventStream(r: object, m: Metadata): { on(event: string, f: (m: { type: string }) => void): void; cancel(): void }
  close(): void
}

/**
 * Runs `call` from `CONCURRENCY` loops for `SECONDS`: requests per second, p99 (ms), and the daemon's
 * CPU time per request (µs), which is what the daemon can serve at saturation whatever the client costs.
 */
async function load(pid: number, call: () => Promise<void>): Promise<{ rps: number; p99: number; cpuUs: number }> {
  const before = cpuTime(pid)
  const latencies: number[] = []
  const until = performance.now() + SECONDS * 1000
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (performance.now() < until) {
        const started = performance.now()
        await call()
        latencies.push(performance.now() - started)
      }
    }),
  )
  const after = cpuTime(pid)
  latencies.sort((a, b) => a - b)
  const cpuUs = ((after.user + after.kernel - before.user - before.kernel) * 1e6) / Math.max(1, latencies.length)
  return { rps: latencies.length / SECONDS, p99: latencies[Math.floor(latencies.length * 0.99)] ?? 0, cpuUs }
}

/** The rows of the scenario. */
export async function rpcRows(binary: string, work: string, row: Row): Promise<void> {
  const dir = mkdtempSync(join(work, 'rpc-'))
  const port = freePort()
  const rpcPort = freePort()
  const proc = Bun.spawn([binary, 'serve', '--port', String(port), '--data-dir', join(dir, 'data')], {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      FLAGD_ADMIN_USERNAME: 'admin',
      FLAGD_ADMIN_PASSWORD: 'bench-password',
      FLAGD_EVALUATION_PORT: String(rpcPort),
    },
    stdout: Bun.file(join(dir, 'flagd.log')),
    stderr: 'inherit',
  })
  const clients: Rpc[] = []
  try {
    const url = `http://127.0.0.1:${port}`
    await waitFor(`${url}/health`)
    const auth = await loginHeaders(url, 'admin', 'bench-password')
    await fetch(`${url}/api/migrations`, { method: 'PUT', headers: auth, body: JSON.stringify(flagDocument(1000, 'app')) })
    const token = await evaluateToken({ url, auth }, 'bench')
    const metadata = new Metadata()
    metadata.set('authorization', `Bearer ${token}`)
    const Client = makeGenericClientConstructor(evaluationService('v2'), 'Service')
    const rpc = new Client(`127.0.0.1:${rpcPort}`, credentials.createInsecure()) as unknown as Rpc
    clients.push(rpc)
    const context = { fields: { targetingKey: { stringValue: 'u1' } } }
    const viaRpc = () =>
      new Promise<void>((resolve, reject) =>
        rpc.ResolveInt({ flagKey: 'app/g07/f507', context }, metadata, (e) => (e ? reject(e) : resolve())),
      )
    const body = JSON.stringify({ context: { targetingKey: 'u1' } })
    const viaOfrep = async () => {
      const res = await fetch(`${url}/ofrep/v1/evaluate/flags/app/g07/f507`, {
        method: 'POST',
        headers: { 'x-api-key': token, 'content-type': 'application/json' },
        body,
      })
      await res.arrayBuffer()
    }
    const pid = proc.pid as number
    await load(pid, viaRpc)
    await load(pid, viaOfrep) // warm-up of both
    const ratios: number[] = []
    let rpcP99 = 0
    let ofrepP99 = 0
    for (let r = 0; r < ROUNDS; r++) {
      const a = await load(pid, viaRpc)
      const b = await load(pid, viaOfrep)
      // the daemon's CPU per request: OFREP's over RPC's is RPC's throughput at saturation as a share of OFREP's
      ratios.push(b.cpuUs / a.cpuUs)
      rpcP99 = Math.max(rpcP99, a.p99)
      ofrepP99 = Math.max(ofrepP99, b.p99)
    }
    ratios.sort((a, b) => a - b)
    const median = ratios[Math.floor(ratios.length / 2)] as number
    row(
      `RPC evaluation (ResolveInt, v2) against OFREP single, same flag and context, ${CONCURRENCY} callers (the daemon's CPU per request)`,
      `${median.toFixed(2)} × OFREP (${(ratios[0] as number).toFixed(2)}–${(ratios.at(-1) as number).toFixed(2)}); p99 RPC ${rpcP99.toFixed(1)} ms, OFREP ${ofrepP99.toFixed(1)} ms`,
      '≥ 0.8 ×',
      median >= 0.8,
      { ratios, rpcP99, ofrepP99 },
    )

    // 500 providers listening; one change through the API
    const streams: { cancel(): void }[] = []
    const told: number[] = []
    let changedAt = 0
    await Promise.all(
      Array.from(
        { length: 500 },
        (_, i) =>
          new Promise<void>((ready) => {
            const client = new Client(`127.0.0.1:${rpcPort}`, credentials.createInsecure(), {
              'grpc.use_local_subchannel_pool': 1,
              channelOverride: undefined,
            } as never) as unknown as Rpc
            clients.push(client)
            const s = client.EventStream({}, metadata)
            streams.push(s)
            s.on('data', (m) => {
              if (m.type === 'provider_ready') ready()
              if (m.type === 'configuration_change' && changedAt > 0) told[i] = performance.now() - changedAt
            })
            s.on('error', () => {})
          }),
      ),
    )
    changedAt = performance.now()
    await fetch(`${url}/api/flags/app/g00/f0`, { method: 'PUT', headers: auth, body: JSON.stringify({ value: 424242 }) })
    const deadline = performance.now() + 5000
    while (told.filter((t) => t !== undefined).length < 500 && performance.now() < deadline) await Bun.sleep(5)
    const reached = told.filter((t) => t !== undefined)
    const last = reached.length === 0 ? Number.POSITIVE_INFINITY : Math.max(...reached)
    row(
      'EventStream fan-out: a change through the API told to 500 providers',
      `${reached.length} told, the last ${last.toFixed(0)} ms after the change was sent`,
      'within 100 ms',
      reached.length === 500 && last <= 100,
      { told: reached.length, lastMs: last },
    )
    for (const s of streams) s.cancel()

    // OTLP: one request of 1,000 evaluation data points
    const names = Object.keys(flagDocument(1000, 'app').flags)
    const attr = (key: string, value: string) => ({ key, value: { stringValue: value } })
    const request = OtlpRequest.encode(
      OtlpRequest.fromObject({
        resourceMetrics: [
          {
            resource: { attributes: [attr('service.name', 'bench')] },
            scopeMetrics: [
              {
                scope: { name: '@openfeature/open-telemetry-hooks' },
                metrics: [
                  {
                    name: 'feature_flag.evaluation_success_total',
                    sum: {
                      aggregationTemporality: 1,
                      isMonotonic: true,
                      dataPoints: names.map((flag) => ({
                        attributes: [
                          attr('feature_flag.key', flag),
                          attr('feature_flag.result.variant', 'x'),
                          attr('feature_flag.result.reason', 'STATIC'),
                        ],
                        asInt: 3,
                      })),
                    },
                  },
                ],
              },
            ],
          },
        ],
      }),
    ).finish()
    const times: number[] = []
    for (let i = 0; i < 10; i++) {
      const started = performance.now()
      const res = await fetch(`${url}/v1/metrics`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-protobuf' },
        body: request,
      })
      await res.arrayBuffer()
      times.push(performance.now() - started)
    }
    times.sort((a, b) => a - b)
    const medianMs = times[5] as number
    row(
      'OTLP/HTTP: one request of 1,000 evaluation data points (protobuf)',
      `${medianMs.toFixed(1)} ms (median of 10; ${(times[0] as number).toFixed(1)}–${(times[9] as number).toFixed(1)})`,
      '< 50 ms',
      medianMs < 50,
      { ms: times },
    )
  } finally {
    for (const c of clients) c.close()
    proc.kill('SIGTERM')
    await proc.exited
  }
}
