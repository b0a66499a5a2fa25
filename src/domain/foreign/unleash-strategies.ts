/**
 * Unleash's activation strategies as conditions of flagd's rule language (docs/migrations.md#from-unleash):
 * `default`, `userWithId`, `remoteAddress` (addresses, not ranges), `flexibleRollout` and the legacy
 * gradual rollouts, each AND its constraints and segments, as Unleash's SDKs evaluate them. A
 * rollout keeps its percentage exactly as a `fractional` split; `applicationHostname` and custom
 * strategies come back as the reason they cannot be carried.
 */

import { constraintRule, contextVar } from './unleash-constraints.ts'
import type { UnleashStrategy } from './unleash-export.ts'
import { bucketKey } from './unleash-variants.ts'

/** A strategy's condition; `split` when it holds a percentage. */
export type StrategyCondition = { rule: unknown; split: boolean } | { reason: string }

/** How a strategy refers to a segment: a rule (`$ref`, or `false` for one the file does not have), or why it cannot. */
export type SegmentRef = (id: number) => { rule: unknown } | { reason: string }

/** All of `rules` (`true` dropped; `false` if any is). */
export function allOf(rules: readonly unknown[]): unknown {
  const kept = rules.filter((r) => r !== true)
  if (kept.includes(false)) return false
  return kept.length === 0 ? true : kept.length === 1 ? kept[0] : { and: kept }
}

const given = (v: unknown) => ({ and: [{ '!=': [v, null] }, { '!==': [v, ''] }] })

/** Whole percent Unleash enables (its hash is a whole 1-100 compared with the number); 0 for a non-number. */
function wholePercent(v: unknown): number {
  const n = Number(v)
  return Number.isNaN(n) ? 0 : Math.min(100, Math.max(0, Math.floor(n)))
}

/** The share `percent` of the keys of `key`: a constant at 0 and 100. */
function share(key: unknown, percent: number): unknown {
  if (percent <= 0) return false
  if (percent >= 100) return true
  return { '==': [{ fractional: [key, [1, percent], [0, 100 - percent]] }, 1] }
}

/** A rollout of `percent` by `stickiness` in `group`: Unleash enables none without the stickiness field. */
function rollout(group: string, stickiness: string, percent: number): StrategyCondition {
  const key = bucketKey(group, stickiness, false)
  if ('reason' in key) return key
  const random = stickiness === 'default' || stickiness === 'random' || stickiness === ''
  const field = random ? undefined : contextVar(stickiness)
  if (field !== undefined && 'reason' in field) return field
  const rule = share(key.rule, percent)
  return { rule: field === undefined || rule === false ? rule : allOf([given(field), rule]), split: percent > 0 && percent < 100 }
}

const list = (v: unknown) => (typeof v === 'string' && v !== '' ? v.split(/\s*,\s*/) : [])

function strategyRule(s: UnleashStrategy, feature: string): StrategyCondition {
  const p = s.parameters
  switch (s.name) {
    case 'default':
      return { rule: true, split: false }
    case 'userWithId':
      return { rule: { in: [{ var: 'targetingKey' }, list(p.userIds)] }, split: false }
    case 'remoteAddress': {
      const addresses: string[] = []
      for (const range of list(p.IPs)) {
        if (!range.includes('/')) addresses.push(range)
        else if (range.endsWith('/32')) addresses.push(range.slice(0, -3))
        else return { reason: `remoteAddress range ${range}: flagd's rules cannot test address ranges` }
      }
      return { rule: addresses.length === 0 ? false : { in: [{ var: 'remoteAddress' }, addresses] }, split: false }
    }
    case 'flexibleRollout': {
      const group = typeof p.groupId === 'string' && p.groupId !== '' ? p.groupId : feature
      const stickiness = typeof p.stickiness === 'string' && p.stickiness !== '' ? p.stickiness : 'default'
      return rollout(group, stickiness, wholePercent(p.rollout))
    }
    case 'gradualRolloutUserId':
    case 'gradualRolloutSessionId': {
      const group = typeof p.groupId === 'string' ? p.groupId : ''
      return rollout(group, s.name === 'gradualRolloutUserId' ? 'userId' : 'sessionId', wholePercent(p.percentage))
    }
    case 'gradualRolloutRandom':
      return rollout('', 'random', wholePercent(p.percentage))
    case 'applicationHostname':
      return { reason: "strategy applicationHostname: it tests the host the SDK runs on, which flagd's context does not carry" }
    default:
      return { reason: `custom strategy ${s.name}: its code runs in Unleash's SDKs only` }
  }
}

/** The condition under which strategy `s` of `feature` enables it (see module comment). */
export function strategyCondition(s: UnleashStrategy, feature: string, segment: SegmentRef): StrategyCondition {
  const own = strategyRule(s, feature)
  if ('reason' in own) return own
  const parts: unknown[] = []
  for (const c of s.constraints) {
    const t = constraintRule(c)
    if ('reason' in t) return { reason: `strategy ${s.name}: ${t.reason}` }
    parts.push(t.rule)
  }
  for (const id of s.segments) {
    const t = segment(id)
    if ('reason' in t) return { reason: `strategy ${s.name}: ${t.reason}` }
    parts.push(t.rule)
  }
  const rule = allOf([...parts, own.rule])
  return { rule, split: own.split && rule !== false }
}
