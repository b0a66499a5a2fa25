/** Flag usage schemas (docs/api.md#usage), for `components.schemas`. */

type Json = Record<string, unknown>

const AT = { type: 'string', format: 'date-time', example: '2026-11-25T05:00:00.000Z' }
const LAST = { ...AT, nullable: true, description: 'The newest evaluation counted; null when never evaluated' }
const SYNCED = {
  ...AT,
  nullable: true,
  description:
    "When the flag was last served to a flagd provider in this environment: now while a live sync stream holds a document carrying it, else when the last such stream let it go, a fetch sent it or flagd's evaluation RPC answered it; null when none did since the daemon started. A flag served in-process is never stale; its in-process evaluations are counted only when the application reports them over OTLP (POST /v1/metrics).",
}
const HELD = {
  type: 'boolean',
  description: 'True while a live sync stream holds the flag; false at once when the provider leaves',
}

/** The usage schemas. */
export function usageComponents(): Record<string, Json> {
  return {
    FlagUsage: {
      type: 'object',
      additionalProperties: false,
      required: ['name', 'total', 'lastEvaluatedAt', 'lastSyncedAt', 'lastServedInProcessAt', 'heldInProcess', 'variants', 'hours'],
      properties: {
        name: { type: 'string' },
        lastSyncedAt: SYNCED,
        lastServedInProcessAt: SYNCED,
        heldInProcess: HELD,
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
        heldInProcess: false,
        variants: { on: 310, off: 1210 },
        hours: [{ at: '2026-11-25T05:00:00.000Z', count: 1520 }],
      },
    },
    UsageSummary: {
      type: 'object',
      additionalProperties: false,
      required: [
        'name',
        'total',
        'lastEvaluatedAt',
        'lastSyncedAt',
        'lastServedInProcessAt',
        'heldInProcess',
        'stale',
        'potentiallyStale',
        'archived',
      ],
      properties: {
        name: { type: 'string' },
        total: { type: 'integer', minimum: 0, description: 'Evaluations over the last 30 days' },
        lastEvaluatedAt: LAST,
        lastSyncedAt: SYNCED,
        lastServedInProcessAt: SYNCED,
        heldInProcess: HELD,
        stale: {
          type: 'boolean',
          description: 'Neither evaluated, nor held by an in-process provider, nor changed for usage.staleDays',
        },
        potentiallyStale: {
          type: 'boolean',
          description: "Outlived its kind's expected lifetime (lifecycle.<kind>Days) since it was created",
        },
        archived: { type: 'boolean', description: 'Archived flags keep their usage' },
      },
    },
  }
}
