/**
 * The service's refusals by field, for the forms that show each next to its field (docs/api.md#conventions).
 */

/** Field → reason from a service error (its `details.errors`, or `details.field`). */
export function fieldErrors(problem: unknown): Record<string, string> {
  const details = (problem as { error?: { details?: { field?: string; reason?: string; errors?: { field: string; reason: string }[] } } })
    ?.error?.details
  // no prototype: a field named toString or __proto__ (a request's own key) holds its reason like any other
  const out: Record<string, string> = Object.create(null)
  for (const e of details?.errors ?? []) out[e.field] ??= e.reason
  if (details?.field && details.reason) out[details.field] ??= details.reason
  return out
}
