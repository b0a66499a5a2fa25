/**
 * A guard as its form holds it (docs/ui.md#guarded-rollouts): text fields, turned into the
 * `rollout.guard` the API takes and read back from it. An error-rate check's allowed increase is
 * typed in percentage points (the words the card says it in) and sent as a rate (0–1); empty
 * optional fields are left out, so the service's defaults apply.
 */

import type { Guard, GuardCheck } from '../../domain/rollout-guard.ts'

/** One check in the form: every kind's fields, as typed. */
export interface CheckDraft {
  kind: GuardCheck['kind']
  errors: string
  total: string
  histogram: string
  metric: string
  maxIncrease: string
  max: string
  windowSeconds: string
}

/** A guard in the form. */
export interface GuardDraft {
  checks: CheckDraft[]
  minSamples: string
  alpha: string
  action: 'rollback' | 'pause'
}

/** A new check of `kind`, filled with OpenTelemetry's usual names where there are some. */
export function newCheck(kind: GuardCheck['kind']): CheckDraft {
  return {
    kind,
    errors: kind === 'error-rate' ? 'app.errors' : '',
    total: kind === 'error-rate' ? 'app.requests' : '',
    histogram: kind === 'mean' ? 'http.server.request.duration' : '',
    metric: kind === 'threshold' ? 'app.errors' : '',
    maxIncrease: '',
    max: kind === 'threshold' ? '10' : '',
    windowSeconds: kind === 'threshold' ? '300' : '',
  }
}

/** The form of `guard` (none: no checks, the defaults' fields empty). */
export function draftOfGuard(guard: Guard | undefined): GuardDraft {
  const text = (n: number | undefined) => (n === undefined ? '' : String(n))
  return {
    checks: (guard?.checks ?? []).map((c) => {
      const d = { ...newCheck(c.kind), errors: '', total: '', histogram: '', metric: '', max: '', windowSeconds: '' }
      if (c.kind === 'error-rate')
        return { ...d, errors: c.errors, total: c.total, maxIncrease: c.maxIncrease === undefined ? '' : String(toPoints(c.maxIncrease)) }
      if (c.kind === 'mean') return { ...d, histogram: c.histogram, maxIncrease: text(c.maxIncrease) }
      return { ...d, metric: c.metric, max: text(c.max), windowSeconds: text(c.windowSeconds) }
    }),
    minSamples: text(guard?.minSamples),
    alpha: text(guard?.alpha),
    action: guard?.action ?? 'rollback',
  }
}

const toPoints = (rate: number) => Number((rate * 100).toPrecision(12))
const toRate = (points: number) => Number((points / 100).toPrecision(12))

/** A typed number, or the text itself when it is not one (so the service names the field). */
function numberOf(text: string): number | string {
  const t = text.trim()
  return t !== '' && Number.isFinite(Number(t)) ? Number(t) : t
}

/** The `rollout.guard` of a form; `undefined` when it has no check (the rollout is unguarded). */
export function guardOfDraft(d: GuardDraft): Guard | undefined {
  if (d.checks.length === 0) return undefined
  const optional = (key: string, text: string, map: (n: number) => number = (n) => n) => {
    if (text.trim() === '') return {}
    const n = numberOf(text)
    return { [key]: typeof n === 'number' ? map(n) : n }
  }
  const checks = d.checks.map((c): GuardCheck => {
    if (c.kind === 'error-rate')
      return { kind: c.kind, errors: c.errors.trim(), total: c.total.trim(), ...optional('maxIncrease', c.maxIncrease, toRate) }
    if (c.kind === 'mean') return { kind: c.kind, histogram: c.histogram.trim(), ...optional('maxIncrease', c.maxIncrease) }
    return { kind: c.kind, metric: c.metric.trim(), max: numberOf(c.max) as number, windowSeconds: numberOf(c.windowSeconds) as number }
  })
  return { checks, ...optional('minSamples', d.minSamples), ...optional('alpha', d.alpha), action: d.action }
}
