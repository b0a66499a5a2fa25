/**
 * POST /v1/metrics (docs/openfeature.md#in-process-usage): an OTLP/HTTP metrics endpoint, as an
 * OpenTelemetry collector answers it, that adds the evaluation counts of applications evaluating
 * in-process to flag usage, and keeps the points of the metrics guards read
 * (docs/guarded-rollouts.md#the-applications-metrics). Protobuf or JSON, at most 4 MiB, with an
 * API token (or a session) holding `flag:evaluate` (or `flag:read`); gzip or uncompressed.
 */

import { canSeeFlag } from '../../domain/access-policy.ts'
import { AppError, InvalidError } from '../../domain/errors.ts'
import { environmentOf, type Principal } from '../../domain/principal.ts'
import { readLimited } from '../../io/read-limited.ts'
import type { GuardMetrics } from '../../services/guard-metrics.ts'
import type { GuardWatcher } from '../../services/guard-watcher.ts'
import type { InProcessUsage } from '../../services/in-process-usage.ts'
import { customAnswer } from '../answers.ts'
import { contentCodingOf } from '../body-reader.ts'
import { inflated } from '../connect-protocol.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { NoQuery } from '../schemas/common-schemas.ts'

const LIMIT = 4 * 2 ** 20

// protobufjs and the OTLP schema load with the first report, not with the daemon: they cost every
// daemon resident memory at start (docs/performance.md#what-start-up-does-not-load), and most never get one
let codec: Promise<typeof import('../otlp-metrics.ts')> | undefined
const otlpCodec = () => {
  codec ??= import('../otlp-metrics.ts')
  return codec
}

/** Who reports: a cumulative series is followed per reporter (docs/guarded-rollouts.md#the-applications-metrics). */
const reporterOf = (p: Principal) => (p.kind === 'token' ? `t:${p.tokenId}` : p.kind === 'user' ? `u:${p.userId}` : `s:${p.name}`)

/** The OTLP route; `environment`: the default one, which a caller not confined to one reports for. */
export function otlpRoutes(deps: {
  inProcessUsage: InProcessUsage
  guardMetrics: GuardMetrics
  environment: string
  /** Checks the guards of the flags whose counts a report moved; the answer waits for their trips' commits. */
  guards: Pick<GuardWatcher, 'reported'>
}): RouteSpec[] {
  return [
    route({
      method: 'POST',
      path: '/v1/metrics',
      permission: 'flag:evaluate',
      query: NoQuery,
      body: {
        limit: LIMIT,
        // the body as bytes: protobuf or JSON, decoded in the handler by its content type
        read: async (request, limit) => {
          const type = (request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase()
          if (type !== 'application/x-protobuf' && type !== 'application/json')
            throw new AppError('UNSUPPORTED_MEDIA_TYPE', 'OTLP metrics are application/x-protobuf or application/json')
          const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', `an OTLP request is at most ${limit} bytes`)
          const declared = request.headers.get('content-length')
          if (declared !== null && Number(declared) > limit) throw tooLarge()
          const bytes = await readLimited(request.body, limit, tooLarge)
          // a Collector's otlphttp exporter sends gzip by default: inflated, never past the limit
          const coding = contentCodingOf(request.headers)
          return { json: type === 'application/json', bytes: coding === undefined ? bytes : inflated(bytes, coding, limit) }
        },
      },
      async handle(c) {
        const { json, bytes } = c.body as { json: boolean; bytes: Uint8Array }
        const { decodeOtlpMetrics, encodeOtlpResponse } = await otlpCodec()
        let decoded: ReturnType<typeof decodeOtlpMetrics>
        try {
          decoded = decodeOtlpMetrics(bytes, json)
        } catch (err) {
          throw new InvalidError((err as Error).message, 'body', 'not an OTLP metrics request')
        }
        // checks the caller may report in its environment (before any point is kept)
        deps.inProcessUsage.ingest(c.auth, decoded.points)
        let rejected = decoded.rejected
        if (decoded.metrics.length > 0) {
          const principal = c.auth
          const env = environmentOf(principal) ?? deps.environment
          const moved = deps.guardMetrics.ingest(
            reporterOf(principal),
            env,
            decoded.metrics,
            (flag) => canSeeFlag(principal, flag),
            (n) => {
              rejected += n
            },
          )
          if (moved.size > 0) await deps.guards.reported(env, moved)
        }
        return customAnswer(c.id, encodeOtlpResponse(rejected, json), 200, {
          'content-type': json ? 'application/json' : 'application/x-protobuf',
        })
      },
      docs: {
        summary: 'Report in-process evaluations (OTLP/HTTP metrics)',
        operationId: 'exportMetrics',
        tag: 'flags',
        access: 'flag:evaluate',
        description:
          "An OpenTelemetry collector's metrics endpoint: the counter feature_flag.evaluation_success_total of OpenFeature's MetricsHook is added to flag usage (per variant and environment; cumulative counters by their increase); the monotonic counters and histograms a guard of the caller's environment names, labelled feature_flag.key and feature_flag.result.variant, are kept for the guard; every other metric is ignored. application/x-protobuf or application/json, at most 4 MiB.",
        body: { type: 'object', description: 'An OTLP ExportMetricsServiceRequest' },
        success: {
          status: 200,
          schema: { type: 'object', description: 'ExportMetricsServiceResponse: partialSuccess counts malformed points' },
          description: 'Accepted',
        },
        errors: [400, 401, 403, 413, 415],
      },
    }),
  ]
}
