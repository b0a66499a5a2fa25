/** What `/health` reports: whether the store accepts writes, and how many flags it holds. */

import type { Store } from '../storage/store.ts'

/** A snapshot of the service's health. */
export interface Health {
  writable: boolean
  flags: number
}

/** Health checks over the store. */
export interface HealthService {
  check(): Health
}

/** Creates the health service. */
export function createHealthService(store: Store): HealthService {
  return { check: () => ({ writable: store.writable, flags: store.committed().flags.size }) }
}
