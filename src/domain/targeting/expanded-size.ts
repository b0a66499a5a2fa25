/**
 * How large a segment's rule becomes in flagd's own format, where a `$ref` inside an evaluator is
 * written out as the rule it names (flagd does not nest `$ref`). Segments that each use the one
 * before twice double at every step, so the size is computed without expanding (each segment
 * measured once), and writes that would make an evaluator too large to export are refused.
 */

/** The largest a segment may become written out in flagd's format (JSON bytes, UTF-16 units). */
export const EXPANDED_RULE_MAX = 256 * 1024

/**
 * The JSON length of `rule` with every `$ref` to a segment of `segments` written out; a reference
 * in a cycle or to no segment counts as written. Stops counting past `EXPANDED_RULE_MAX` + 1.
 */
export function expandedRuleSize(rule: unknown, segments: ReadonlyMap<string, unknown>, known = new Map<string, number>()): number {
  const inCycle = new Set<string>()
  const size = (node: unknown): number => {
    if (node === null || typeof node !== 'object') return JSON.stringify(node)?.length ?? 4
    if (Array.isArray(node)) {
      let n = 1 + node.length
      for (const item of node) n = Math.min(n + size(item), EXPANDED_RULE_MAX + 1)
      return n
    }
    const keys = Object.keys(node)
    const ref = (node as { $ref?: unknown }).$ref
    if (keys.length === 1 && typeof ref === 'string' && segments.has(ref) && !inCycle.has(ref)) {
      let n = known.get(ref)
      if (n === undefined) {
        inCycle.add(ref)
        n = size(segments.get(ref))
        inCycle.delete(ref)
        known.set(ref, n)
      }
      return n
    }
    let n = 1 + Math.max(keys.length, 1)
    for (const key of keys)
      n = Math.min(n + JSON.stringify(key).length + 1 + size((node as Record<string, unknown>)[key]), EXPANDED_RULE_MAX + 1)
    return n
  }
  return size(rule)
}
