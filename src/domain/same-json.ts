/**
 * Equality of JSON values whatever the order of their objects' keys (docs/migrations.md#what-counts-as-a-change):
 * `{"a": 1, "b": 2}` and `{"b": 2, "a": 1}` say the same, so writing a file's variants or metadata
 * in another order changes nothing. Arrays keep their order.
 */

/** `value` as JSON text with every object's keys sorted. */
export function sortedJson(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v: unknown) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return v
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(v).sort()) out[key] = (v as Record<string, unknown>)[key]
    return out
  })
}

/** Whether `a` and `b` are the same JSON, object keys in any order. */
export function sameJson(a: unknown, b: unknown): boolean {
  return a === b || sortedJson(a) === sortedJson(b)
}
