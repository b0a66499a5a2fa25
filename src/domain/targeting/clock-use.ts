/**
 * Whether a rule can read the time of the evaluation (`$flagd.timestamp`): then its answer for one
 * context changes as time passes, so a cached answer and the bulk ETag must know the second it was
 * made in (docs/targeting.md#time). Found without running the rule: a `var` of a `$flagd` path
 * other than `$flagd.flagKey`, of the whole data (which holds `$flagd`) or of a computed path counts,
 * in the rule or in any segment it uses.
 */

const CLOCK_FREE = new Set(['$flagd.flagKey'])

/** True when `rule` (or a segment it refers to, in `segments`) may read the evaluation's time. */
export function readsClock(rule: unknown, segments: ReadonlyMap<string, unknown>, seen = new Set<string>()): boolean {
  if (rule === null || typeof rule !== 'object') return false
  if (Array.isArray(rule)) return rule.some((r) => readsClock(r, segments, seen))
  for (const [op, arg] of Object.entries(rule)) {
    if (op === 'var') {
      const path = Array.isArray(arg) ? arg[0] : arg
      if (path !== null && typeof path === 'object') return true // computed: could be anything
      const text = path === undefined || path === null ? '' : String(path)
      if (text === '' || (text.startsWith('$flagd') && !CLOCK_FREE.has(text))) return true
      if (Array.isArray(arg) && readsClock(arg.slice(1), segments, seen)) return true
      continue
    }
    if (op === '$ref' && typeof arg === 'string') {
      if (seen.has(arg)) continue
      seen.add(arg)
      if (readsClock(segments.get(arg), segments, seen)) return true
      continue
    }
    if (readsClock(arg, segments, seen)) return true
  }
  return false
}
