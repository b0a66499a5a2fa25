/** What `/health` reports: whether the store accepts writes, and how many flags it holds. */

import type { Snapshot, Store } from '../storage/store.ts'

/** A snapshot of the service's health. */
export interface Health {
  readonly writable: boolean
  readonly flags: number
}

/** Health checks over the store. */
export interface HealthService {
  /** The current health; the same object while nothing it reports can have changed. */
  check(): Health
}

/** Creates the health service. */
export function createHealthService(store: Store): HealthService {
  // kept per committed snapshot: /health is polled hard, and answers from the same object
  let seen: { state: Snapshot; health: Health } | undefined
  return {
    check() {
      const state = store.committed()
      const writable = store.writable
      if (seen === undefined || seen.state !== state || seen.health.writable !== writable)
        seen = { state, health: { writable, flags: state.flags.size } }
      return seen.health
    },
  }
}
