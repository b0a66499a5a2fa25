/** Freezing a value with everything it holds: configuration and stored rows are never changed in place. */

/** Freezes `value` and every object inside it (already frozen parts are not walked again); returns it. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value)
    // only objects are descended into, and no list of the children is made: the store freezes
    // every row an import writes (docs/performance.md#imports)
    if (Array.isArray(value)) {
      for (const v of value) if (typeof v === 'object' && v !== null) deepFreeze(v)
    } else
      for (const key in value)
        if (Object.hasOwn(value, key)) {
          const v = (value as Record<string, unknown>)[key]
          if (typeof v === 'object' && v !== null) deepFreeze(v)
        }
  }
  return value
}
