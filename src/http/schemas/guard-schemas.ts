/** Schemas of a rollout's standing and its guard's reading (docs/guarded-rollouts.md#reading-a-guard), for `components.schemas`. */

type Json = Record<string, unknown>

const NUMBER = { type: 'number' }
const COUNT = { type: 'number', minimum: 0 }

/** An interval of treatment minus control, as the guard judges it. */
const DIFFERENCE: Json = {
  type: 'object',
  nullable: true,
  additionalProperties: false,
  required: ['estimate', 'lower', 'upper'],
  description:
    'Treatment minus control, with the bounds of its always-valid confidence sequence; null while collecting and for threshold checks',
  properties: { estimate: NUMBER, lower: NUMBER, upper: NUMBER },
}

/** One arm: `{total, errors, rate}` (error-rate), `{count, mean}` (mean) or `{increase}` (threshold). */
const ARM: Json = {
  type: 'object',
  description: '{total, errors, rate} for an error-rate check, {count, mean} for a mean check, {increase} for a threshold check',
  properties: {
    total: COUNT,
    errors: COUNT,
    rate: { type: 'number', nullable: true, minimum: 0, maximum: 1 },
    count: COUNT,
    mean: { type: 'number', nullable: true },
    increase: COUNT,
  },
}

/** The guard schemas. */
export function guardComponents(): Record<string, Json> {
  return {
    GuardCheckReading: {
      type: 'object',
      additionalProperties: false,
      required: ['kind', 'state', 'treatment', 'control', 'difference'],
      properties: {
        kind: { type: 'string', enum: ['error-rate', 'mean', 'threshold'] },
        state: {
          type: 'string',
          enum: ['collecting', 'healthy', 'tripped'],
          description: 'collecting: an arm has fewer than minSamples; tripped: this check stopped the rollout',
        },
        treatment: { ...ARM, description: `The rollout's variant. ${ARM.description}` },
        control: { ...ARM, nullable: true, description: 'Every other variant of the flag; null for a threshold check' },
        difference: DIFFERENCE,
      },
    },
    RolloutReport: {
      type: 'object',
      additionalProperties: false,
      required: ['rollout', 'status', 'percent', 'guard'],
      properties: {
        rollout: {
          type: 'object',
          additionalProperties: true,
          description: "The flag's rollout in the environment, as a flag read shows it",
        },
        status: { type: 'string', enum: ['pending', 'running', 'completed', 'paused', 'rolled-back'] },
        percent: { type: 'number', minimum: 0, maximum: 100, description: 'The share served the variant now (0 once rolled back)' },
        guard: {
          type: 'object',
          nullable: true,
          additionalProperties: false,
          required: ['checks', 'checkedAt', 'trippedAt'],
          description: 'null for a rollout without a guard',
          properties: {
            checks: { type: 'array', items: { $ref: '#/components/schemas/GuardCheckReading' } },
            checkedAt: { type: 'string', format: 'date-time', description: 'When this reading was made (the trip, once tripped)' },
            trippedAt: { type: 'string', format: 'date-time', nullable: true },
          },
        },
      },
      example: {
        rollout: {
          variant: 'on',
          start: '2026-12-07T09:00:00.000Z',
          end: '2026-12-08T09:00:00.000Z',
          fromPercent: 5,
          toPercent: 100,
          guard: { checks: [{ kind: 'error-rate', errors: 'http.server.errors', total: 'http.server.requests' }] },
          status: 'running',
          percent: 23,
        },
        status: 'running',
        percent: 23,
        guard: {
          checks: [
            {
              kind: 'error-rate',
              state: 'healthy',
              treatment: { total: 4120, errors: 41, rate: 0.00995 },
              control: { total: 13870, errors: 150, rate: 0.01081 },
              difference: { estimate: -0.00086, lower: -0.0061, upper: 0.0044 },
            },
          ],
          checkedAt: '2026-12-07T13:10:00.000Z',
          trippedAt: null,
        },
      },
    },
  }
}
