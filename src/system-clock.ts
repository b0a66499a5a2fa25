/**
 * The real clock: the only place in the daemon that reads today's date. Everything else receives a
 * `Clock` (docs/development.md#time), so tests can run it at any date.
 */

import type { Clock } from './domain/clock.ts'

/** The system's wall clock. */
export const systemClock: Clock = () => new Date()
