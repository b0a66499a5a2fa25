/** Freezing a value with everything it holds: configuration and stored rows are never changed in place. */

/** Freezes `value` and every object inside it (already frozen parts are not walked again); returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    for (const v of Object.values(value)) deepFreeze(v)
  }
  return value
}
