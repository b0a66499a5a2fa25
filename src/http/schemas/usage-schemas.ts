/** Flag usage schemas (docs/api.md#usage), for `components.schemas`. */

type Json = Record<string, unknown>

const AT = { type: 'string', format: 'date-time', example: '2026-11-25T05:00:00.000Z' }
const LAST = { ...AT, nullable: true, description: 'The newest evaluation counted; null when never evaluated' }
const SYNCED = {
  ...AT,
  nullable: true,
  description:
    'When an in-process provider (flagd sync) last held the flag: now while a live stream holds it, else when the last one ended; null when none did since the daemon started. A flag held in-process is never stale; its in-process evaluations are counted only when the application reports them over OTLP (POST /v1/metrics).',
}

/** The usage schemas. */
export function usageComponents(): Record<string, Json> {
  return {
    FlagUsage: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'total', 'lastEvaluatedAt', 'lastSyncedAt', 'lastServedInProcessAt', 'variants', 'hours'],
      properties: {
        name: { type: 'string' },
        lastSyncedAt: SYNCED,
        lastServedInProcessAt: SYNCED,
        total: {
          type: 'integer',
          minimum: 0,
          description:
            "Evaluations counted since `since`: OFREP single and bulk (304s included), flagd's evaluation RPC, and in-process evaluations reported over OTLP",
        },
        lastEvaluatedAt: LAST,
        variants: {
          type: 'object',
          additionalProperties: { type: 'integer', minimum: 0 },
          description: 'Evaluations per variant answered (a bulk 304 answers none, so it counts only in total)',
        },
        hours: {
          type: 'array',
          description: 'Evaluations per hour (UTC), oldest first; hours without any are left out',
          items: {
            type: 'object',
            additionalProperties: false,
            required: ['at', 'count'],
            properties: { at: { ...AT, description: 'The start of the hour' }, count: { type: 'integer', minimum: 0 } },
          },
        },
      },
      example: {
        name: 'checkout/new_flow',
        total: 1520,
        lastEvaluatedAt: '2026-11-25T05:41:12.000Z',
        lastSyncedAt: null,
        lastServedInProcessAt: null,
        variants: { on: 310, off: 1210 },
        hours: [{ at: '2026-11-25T05:00:00.000Z', count: 1520 }],
      },
    },
    UsageSummary: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'total', 'lastEvaluatedAt', 'lastSyncedAt', 'lastServedInProcessAt', 'stale'],
      properties: {
        name: { type: 'string' },
        total: { type: 'integer', minimum: 0, description: 'Evaluations over the last 30 days' },
        lastEvaluatedAt: LAST,
        lastSyncedAt: SYNCED,
        lastServedInProcessAt: SYNCED,
        stale: {
          type: 'boolean',
          description: 'Neither evaluated, nor held by an in-process provider, nor changed for usage.staleDays',
        },
      },
    },
  }
}
