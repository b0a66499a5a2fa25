/**
 * Records keyed by names from outside (environment, variant, webhook names): read and written as
 * their own properties only, so a name such as `constructor`, `toString` or `__proto__` is just a
 * name, never an object's built-in property or its prototype (docs/api.md#conventions).
 */

/** The value `record` holds under `key` itself (never one every object inherits). */
export function ownValue<T>(record: Readonly<Record<string, T>> | undefined, key: string): T | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined
}

/** Sets `record[key]` as its own property, even for `__proto__` (which an assignment would take as the prototype). */
export function setOwn<T>(record: Record<string, T>, key: string, value: T): void {
  Object.defineProperty(record, key, { value, writable: true, enumerable: true, configurable: true })
}
