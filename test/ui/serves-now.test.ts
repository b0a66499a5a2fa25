import { expect, test } from 'bun:test'
import type { Rollout } from '../../src/domain/rollout.ts'
import { describeChange } from '../../src/ui/app/audit-diff.ts'
import { rolloutInWords } from '../../src/ui/app/rollout-words.ts'
import { servesNow } from '../../src/ui/app/serves-now.ts'

const iso = (s: string) => s
const rollout: Rollout = { variant: 'true', start: '2026-12-01T00:00:00Z', end: '2026-12-11T00:00:00Z', fromPercent: 10, toPercent: 100 }
const flag = { type: 'BOOLEAN', enabled: true, valueExists: true, value: false, defaultValue: false }

test('a running rollout is what the sentence says first, never "to everyone"', () => {
  const sentence = servesNow({ ...flag, rollout }, Date.parse('2026-12-06T00:00:00Z'), iso)
  expect(sentence).toBe('Serves "true" to 55 % of contexts now, rising to 100 % on 2026-12-11T00:00:00Z; the others: false.')
  expect(sentence).not.toContain('everyone')
})

test('before and after its window, and with a rule', () => {
  expect(servesNow({ ...flag, rollout }, Date.parse('2026-11-30T00:00:00Z'), iso)).toStartWith(
    'Will serve "true" to 10 % of contexts from 2026-12-01T00:00:00Z',
  )
  expect(servesNow({ ...flag, rollout }, Date.parse('2026-12-12T00:00:00Z'), iso)).toStartWith(
    'Serves "true" to 100 % of contexts (its rollout ended',
  )
  const ruled = { ...flag, targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'true'] } }
  expect(servesNow({ ...ruled, rollout }, Date.parse('2026-12-06T00:00:00Z'), iso)).toEndWith(
    'the others: 1 rule decides first (see Targeting), then false.',
  )
  expect(servesNow(ruled, 0, iso)).toBe('Depends on who asks: 1 rule decides first (see Targeting), then false.')
})

const split = {
  fractional: [
    ['on', 20],
    ['off', 80],
  ],
}
const twoRules = {
  if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'on', { in: [{ var: 'country' }, ['DE', 'FR']] }, 'off', split],
}

test('rules and splits are counted: how many rules decide first, and what share each variant gets', () => {
  expect(servesNow({ ...flag, targeting: twoRules }, 0, iso)).toBe(
    'Depends on who asks: 2 rules decide first (see Targeting), then 20 % on, 80 % off, sticky by targetingKey.',
  )
  expect(servesNow({ ...flag, targeting: split }, 0, iso)).toBe('Serves 20 % on, 80 % off, sticky by targetingKey (see Targeting).')
  expect(servesNow({ ...flag, targeting: { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'on', 'off'] } }, 0, iso)).toBe(
    'Depends on who asks: 1 rule decides first (see Targeting), then "off".',
  )
  const custom = { if: [{ '>=': [{ var: 'age' }, 18] }, 'on', { if: [{ var: 'guardian' }, 'on', 'off'] }] }
  expect(servesNow({ ...flag, targeting: custom }, 0, iso)).toBe(
    'Depends on who asks: a rule written as JSON decides (see Targeting), then false where it serves nothing.',
  )
  const at = Date.parse('2026-12-06T00:00:00Z')
  expect(servesNow({ ...flag, targeting: split, rollout }, at, iso)).toEndWith('; the others: 20 % on, 80 % off, sticky by targetingKey.')
})

test('never "to everyone" while a rule or a rollout decides, even one its guard rolled back', () => {
  const at = Date.parse('2026-12-06T00:00:00Z')
  const back = { ...rollout, status: 'rolled-back', percent: 0 }
  for (const targeting of [twoRules, split, { if: [{ '==': [{ var: 'plan' }, 'pro'] }, 'on'] }]) {
    expect(servesNow({ ...flag, targeting }, at, iso)).not.toContain('everyone')
    expect(servesNow({ ...flag, targeting, rollout }, at, iso)).not.toContain('everyone')
    expect(servesNow({ ...flag, targeting, rollout: back }, at, iso)).not.toContain('everyone')
  }
  expect(servesNow({ ...flag, targeting: split, rollout: back }, at, iso)).toBe(
    'Rolled back by its guard: serves "true" to no context (was rising to 100 %); instead: 20 % on, 80 % off, sticky by targetingKey.',
  )
})

test("a rollout's share is said to a tenth of a percent, as it stands now", () => {
  // 3 % → 100 % in 100 steps: the share moves by 0.97 %, so it stands at hundredths (25.31 % here)
  const odd = { ...rollout, fromPercent: 3, toPercent: 100 }
  const sentence = servesNow({ ...flag, rollout: odd }, Date.parse('2026-12-03T08:00:00Z'), iso)
  expect(sentence).toMatch(/^Serves "true" to \d+(\.\d)? % of contexts now, rising to 100 % on 2026-12-11T00:00:00Z; the others: false\.$/)
})

test('without a rule or rollout, the value to everyone; disabled, nothing; an A/B split says its B share', () => {
  expect(servesNow(flag, 0, iso)).toBe('Serves false to everyone.')
  expect(servesNow({ ...flag, enabled: false }, 0, iso)).toBe('Serves nothing: applications use their own default.')
  expect(servesNow({ type: 'AB-TEST', valueExists: false, defaultValue: 'A', chancePercentB: 30 }, 0, iso)).toBe(
    'Serves an A/B split (30 % B) to everyone.',
  )
})

test('a rollout in a history entry is said in words', () => {
  expect(rolloutInWords(rollout, iso)).toBe('rollout of "true" from 10 % on 2026-12-01T00:00:00Z to 100 % on 2026-12-11T00:00:00Z')
  expect(rolloutInWords(null, iso)).toBe('none')
  const entry = {
    id: 1,
    at: '',
    actor: { type: 'user', id: 'u', name: 'ann' },
    source: 'api',
    action: 'flag.updated',
    target: { type: 'flag' },
  }
  const said = describeChange({ ...entry, before: { rollout: null }, after: { rollout } }, iso)
  expect(said).toBe('rollout none → rollout of "true" from 10 % on 2026-12-01T00:00:00Z to 100 % on 2026-12-11T00:00:00Z')
})

test('a rollout its guard stopped says so: rolled back to no one, paused where it stays', () => {
  const at = Date.parse('2026-12-06T00:00:00Z')
  expect(servesNow({ ...flag, rollout: { ...rollout, status: 'rolled-back', percent: 0 } }, at, iso)).toBe(
    'Rolled back by its guard: serves "true" to no context (was rising to 100 %); everyone gets: false.',
  )
  expect(servesNow({ ...flag, rollout: { ...rollout, status: 'paused', percent: 37 } }, at, iso)).toBe(
    'Paused by its guard: serves "true" to 37 % of contexts, no more; the others: false.',
  )
})

test('a guarded rollout in a history entry or a change request names its guard', () => {
  const guard = { checks: [{ kind: 'error-rate' as const, errors: 'app.errors', total: 'app.requests' }], action: 'pause' as const }
  expect(rolloutInWords({ ...rollout, guard }, iso)).toBe(
    'rollout of "true" from 10 % on 2026-12-01T00:00:00Z to 100 % on 2026-12-11T00:00:00Z, guarded by 1 check (error-rate of app.errors per app.requests) that pauses it',
  )
  const two = { checks: [...guard.checks, { kind: 'threshold' as const, metric: 'app.crashes', max: 5, windowSeconds: 60 }] }
  expect(rolloutInWords({ ...rollout, guard: two }, iso)).toEndWith(
    ', guarded by 2 checks (error-rate of app.errors per app.requests, threshold of app.crashes) that roll it back',
  )
})

test("a guard's trip in the history says what it did and when", () => {
  const halted = {
    check: 0,
    kind: 'error-rate' as const,
    treatment: { total: 10, errors: 5, rate: 0.5 },
    control: { total: 10, errors: 0, rate: 0 },
    difference: { estimate: 0.5, lower: 0.1, upper: 0.9 },
    status: 'rolled-back' as const,
    at: '2026-12-04T10:42:00Z',
    percent: 37,
  }
  expect(rolloutInWords({ ...rollout, halted }, iso)).toEndWith(', rolled back by its guard at 2026-12-04T10:42:00Z')
  expect(rolloutInWords({ ...rollout, halted: { ...halted, status: 'paused' } }, iso)).toEndWith(
    ', paused by its guard at 2026-12-04T10:42:00Z at 37 %',
  )
})
