/** The one test for "a JSON object": not null, not an array (request bodies, documents, state files). */

/** True when `v` is a JSON object. */
export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}
