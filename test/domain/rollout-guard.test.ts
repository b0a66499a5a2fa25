/**
 * A rollout's guard as written (docs/guarded-rollouts.md#a-guard): validation naming
 * `rollout.guard.<field>`, what reads show (`status`, `percent`), and what the store keeps across
 * writes (`writtenAt`, `halted`).
 */

import { expect, test } from 'bun:test'
import type { FlagRow } from '../../src/domain/flag-row.ts'
import { type Rollout, rolloutProblems } from '../../src/domain/rollout.ts'
import type { RolloutHalt } from '../../src/domain/rollout-guard.ts'
import { rolloutStatus } from '../../src/domain/rollout-status.ts'
import { haltOnly, keptRollouts } from '../../src/domain/rollout-written.ts'

const VARIANTS = new Set(['true', 'false'])
const BASE = { variant: 'true', start: '2026-12-01T09:00:00Z', end: '2026-12-01T10:00:00Z', fromPercent: 0, toPercent: 100 }
const CHECK = { kind: 'error-rate', errors: 'app.errors', total: 'http.server.requests' }
const fields = (guard: unknown, rollout: Record<string, unknown> = BASE) =>
  rolloutProblems({ ...rollout, guard }, VARIANTS).problems.map((p) => p.field)

test('a valid guard of each kind is kept as written, defaults left out', () => {
  const guard = {
    checks: [
      { ...CHECK, maxIncrease: 0.01 },
      { kind: 'mean', histogram: 'http.server.request.duration', maxIncrease: 0.05 },
      { kind: 'threshold', metric: 'app/crashes_total', max: 0, windowSeconds: 60 },
    ],
    minSamples: 10,
    alpha: 0.001,
    action: 'pause',
  }
  const { rollout, problems } = rolloutProblems({ ...BASE, guard }, VARIANTS)
  expect(problems).toEqual([])
  expect(rollout?.guard).toEqual(guard as never)
  expect(rolloutProblems({ ...BASE, guard: { checks: [CHECK] } }, VARIANTS).rollout?.guard).toEqual({ checks: [CHECK] } as never)
})

test.each([
  ['no checks', { checks: [] }, ['rollout.guard.checks']],
  ['six checks', { checks: Array(6).fill(CHECK) }, ['rollout.guard.checks']],
  ['checks not a list', { checks: CHECK }, ['rollout.guard.checks']],
  ['an unknown kind', { checks: [CHECK, { kind: 'p99' }] }, ['rollout.guard.checks[1].kind']],
  ['a metric name starting with a digit', { checks: [CHECK, { ...CHECK, errors: '5xx' }] }, ['rollout.guard.checks[1].errors']],
  ['a metric name with a space', { checks: [{ ...CHECK, total: 'http requests' }] }, ['rollout.guard.checks[0].total']],
  [
    'a metric name of 256 characters',
    { checks: [{ kind: 'mean', histogram: `a${'b'.repeat(255)}` }] },
    ['rollout.guard.checks[0].histogram'],
  ],
  ['an empty metric name', { checks: [{ kind: 'threshold', metric: '', max: 1, windowSeconds: 60 }] }, ['rollout.guard.checks[0].metric']],
  ['an error-rate increase above 1', { checks: [{ ...CHECK, maxIncrease: 1.5 }] }, ['rollout.guard.checks[0].maxIncrease']],
  ['a negative mean increase', { checks: [{ kind: 'mean', histogram: 'd', maxIncrease: -1 }] }, ['rollout.guard.checks[0].maxIncrease']],
  [
    'an infinite max',
    { checks: [{ kind: 'threshold', metric: 'c', max: Number.POSITIVE_INFINITY, windowSeconds: 60 }] },
    ['rollout.guard.checks[0].max'],
  ],
  [
    'a window of 9 s',
    { checks: [{ kind: 'threshold', metric: 'c', max: 1, windowSeconds: 9 }] },
    ['rollout.guard.checks[0].windowSeconds'],
  ],
  [
    'a window over a day',
    { checks: [{ kind: 'threshold', metric: 'c', max: 1, windowSeconds: 86_401 }] },
    ['rollout.guard.checks[0].windowSeconds'],
  ],
  ['a misspelt field of a check', { checks: [{ ...CHECK, maxIncrese: 0.1 }] }, ['rollout.guard.checks[0].maxIncrese']],
  ['a field of another kind', { checks: [{ ...CHECK, histogram: 'd' }] }, ['rollout.guard.checks[0].histogram']],
  ['minSamples of 9', { checks: [CHECK], minSamples: 9 }, ['rollout.guard.minSamples']],
  ['minSamples not whole', { checks: [CHECK], minSamples: 10.5 }, ['rollout.guard.minSamples']],
  ['minSamples over a million', { checks: [CHECK], minSamples: 1_000_001 }, ['rollout.guard.minSamples']],
  ['alpha of 0.5', { checks: [CHECK], alpha: 0.5 }, ['rollout.guard.alpha']],
  ['alpha of 0.0001', { checks: [CHECK], alpha: 0.0001 }, ['rollout.guard.alpha']],
  ['an unknown action', { checks: [CHECK], action: 'alert' }, ['rollout.guard.action']],
  ['a misspelt field of the guard', { checks: [CHECK], aplha: 0.1 }, ['rollout.guard.aplha']],
  ['a guard that is no object', 'yes', ['rollout.guard']],
])('%s → 400 naming the field', (_name, guard, expected) => {
  expect(fields(guard)).toEqual(expected)
})

test('a metric read as a histogram by one check and as a counter by another is refused: one of them would never see a point', () => {
  const mean = { kind: 'mean', histogram: 'app.x' }
  expect(fields({ checks: [mean, { kind: 'threshold', metric: 'app.x', max: 1, windowSeconds: 60 }] })).toEqual([
    'rollout.guard.checks[1].metric',
  ])
  expect(fields({ checks: [{ ...CHECK, total: 'app.x' }, mean] })).toEqual(['rollout.guard.checks[1].histogram'])
  // the same counter read by two checks is fine
  expect(fields({ checks: [CHECK, { kind: 'threshold', metric: 'app.errors', max: 1, windowSeconds: 60 }] })).toEqual([])
})

test('a misspelt field is answered with its spelling', () => {
  const { problems } = rolloutProblems({ ...BASE, guard: { checks: [CHECK], aplha: 0.1 } }, VARIANTS)
  expect(problems[0]?.reason).toContain('alpha')
})

test('a guard on an incomplete rollout names the missing rollout field', () => {
  const { variant: _v, ...noVariant } = BASE
  expect(fields({ checks: [CHECK] }, noVariant)).toEqual(['rollout.variant'])
  const { end: _e, ...noEnd } = BASE
  expect(fields({ checks: [CHECK] }, noEnd)).toEqual(['rollout.end'])
})

test('status and percent sent back with a rollout are ignored, as are the fields the server keeps', () => {
  const sent = { ...BASE, status: 'running', percent: 42, writtenAt: '2020-01-01T00:00:00Z', halted: { status: 'paused' } }
  const { rollout, problems } = rolloutProblems(sent, VARIANTS)
  expect(problems).toEqual([])
  expect(rollout).toEqual({ ...BASE, start: '2026-12-01T09:00:00.000Z', end: '2026-12-01T10:00:00.000Z' })
})

const rollout: Rollout = { ...BASE, start: '2026-12-01T09:00:00.000Z', end: '2026-12-01T10:00:00.000Z' }
const halt = (status: RolloutHalt['status'], percent: number): RolloutHalt => ({
  status,
  at: '2026-12-01T09:30:00.000Z',
  percent,
  check: 0,
  kind: 'threshold',
  treatment: { increase: 12 },
  control: null,
  difference: null,
})

test('status and percent: pending, running, completed, and as the guard left them', () => {
  const at = (iso: string) => rolloutStatus(rollout, Date.parse(iso))
  expect(at('2026-12-01T08:00:00Z')).toEqual({ status: 'pending', percent: 0 })
  expect(at('2026-12-01T09:30:00Z')).toEqual({ status: 'running', percent: 50 })
  expect(at('2026-12-01T10:00:00Z')).toEqual({ status: 'completed', percent: 100 })
  expect(rolloutStatus({ ...rollout, halted: halt('rolled-back', 50) }, Date.parse('2026-12-01T09:45:00Z'))).toEqual({
    status: 'rolled-back',
    percent: 0,
  })
  expect(rolloutStatus({ ...rollout, halted: halt('paused', 50) }, Date.parse('2026-12-01T11:00:00Z'))).toEqual({
    status: 'paused',
    percent: 50,
  })
})

const row = (rollouts: Record<string, Rollout | undefined>): FlagRow =>
  ({
    id: 'flg_1',
    name: 'f',
    type: 'BOOLEAN',
    description: '',
    revision: 3,
    createdAt: '2026-11-01T00:00:00.000Z',
    updatedAt: '2026-11-01T00:00:00.000Z',
    states: Object.fromEntries(
      Object.entries(rollouts).map(([env, r]) => [env, { valueExists: true, value: false, ...(r ? { rollout: r } : {}) }]),
    ),
  }) as unknown as FlagRow

test('a rollout written as stored keeps writtenAt and its trip; a different one starts afresh; a new one gets writtenAt', () => {
  const stored = { ...rollout, writtenAt: '2026-12-01T08:00:00.000Z', halted: halt('paused', 50) }
  const before = row({ production: stored, staging: undefined })
  const at = '2026-12-01T12:00:00.000Z'
  // sent back as read (keys in another order): kept, object and all
  const { variant, ...rest } = rollout
  const same = keptRollouts(before, row({ production: { ...rest, variant }, staging: undefined }), at)
  expect(same.states.production?.rollout).toBe(stored)
  // another window: afresh
  const moved = keptRollouts(before, row({ production: { ...rollout, toPercent: 60 }, staging: rollout }), at)
  expect(moved.states.production?.rollout).toEqual({ ...rollout, toPercent: 60, writtenAt: at })
  expect(moved.states.staging?.rollout).toEqual({ ...rollout, writtenAt: at })
  // a guard added is a different rollout
  const guarded = keptRollouts(before, row({ production: { ...rollout, guard: { checks: [] } }, staging: undefined }), at)
  expect(guarded.states.production?.rollout).toEqual({ ...rollout, guard: { checks: [] }, writtenAt: at })
  // a new flag
  expect(keptRollouts(null, row({ production: rollout }), at).states.production?.rollout).toEqual({ ...rollout, writtenAt: at })
  // a new environment made as a copy of a stored one: as it is, trip and all
  const copied = keptRollouts(before, row({ production: stored, qa: stored }), at)
  expect(copied.states.qa?.rollout).toBe(stored)
  // nothing to settle: the row itself
  const bare = row({ production: undefined })
  expect(keptRollouts(before, bare, at)).toBe(bare)
})

test('a guard sent with its defaults spelt out is the same guard: a tripped rollout is not restarted by it', () => {
  const guard = { checks: [{ kind: 'threshold' as const, metric: 'app.crashes', max: 5, windowSeconds: 300 }] }
  const stored = { ...rollout, guard, writtenAt: '2026-12-01T08:00:00.000Z', halted: halt('rolled-back', 50) }
  const before = row({ production: stored })
  const at = '2026-12-01T12:00:00.000Z'
  const spelt = { ...guard, minSamples: 200, alpha: 0.05, action: 'rollback' as const }
  expect(keptRollouts(before, row({ production: { ...rollout, guard: spelt } }), at).states.production?.rollout).toBe(stored)
  const mean = { checks: [{ kind: 'mean' as const, histogram: 'app.latency' }] }
  const storedMean = { ...stored, guard: mean }
  const sentMean = { ...rollout, guard: { checks: [{ kind: 'mean' as const, histogram: 'app.latency', maxIncrease: 0 }] } }
  expect(keptRollouts(row({ production: storedMean }), row({ production: sentMean }), at).states.production?.rollout).toBe(storedMean)
  // another value is another guard
  const other = { ...rollout, guard: { ...guard, action: 'pause' as const } }
  expect(keptRollouts(before, row({ production: other }), at).states.production?.rollout).toEqual({ ...other, writtenAt: at })
})

test('haltOnly: a trip of one rollout and nothing else', () => {
  const running = { ...rollout, writtenAt: '2026-12-01T08:00:00.000Z' }
  const before = row({ production: running, staging: running })
  const after = (production: Rollout, staging: Rollout = running) => ({ ...row({ production, staging }), revision: 4 })
  expect(haltOnly(before, after({ ...running, halted: halt('paused', 50) }))).toBe(true)
  expect(haltOnly(before, after({ ...running, halted: halt('paused', 50) }, { ...running, halted: halt('paused', 50) }))).toBe(false)
  expect(haltOnly(before, after({ ...running, toPercent: 50, halted: halt('paused', 50) }))).toBe(false)
  expect(haltOnly(before, after(running))).toBe(false)
  expect(haltOnly(before, { ...after({ ...running, halted: halt('paused', 50) }), description: 'x' })).toBe(false)
  expect(haltOnly(before, null)).toBe(false)
})

test('a check without one of its fields says the field is required and what it names', () => {
  const reasons = (guard: unknown) => rolloutProblems({ ...BASE, guard }, VARIANTS).problems.map((p) => `${p.field}: ${p.reason}`)
  expect(reasons({ checks: [{ kind: 'error-rate', errors: 'app.errors' }] })).toEqual([
    'rollout.guard.checks[0].total: is required: the counter of every request (a metric name)',
  ])
  expect(reasons({ checks: [{ kind: 'mean' }] })).toEqual([
    'rollout.guard.checks[0].histogram: is required: the histogram whose mean is compared (a metric name)',
  ])
  expect(reasons({ checks: [{ kind: 'threshold', max: 0, windowSeconds: 60 }] })).toEqual([
    'rollout.guard.checks[0].metric: is required: the counter whose increase is watched (a metric name)',
  ])
})
