/**
 * Events the services report for logs and metrics, without knowing about either: the composition
 * root connects them to the logger and the Prometheus registry.
 */

/** Where an import came from. */
export type ImportSource = 'api' | 'url' | 'watcher' | 'cli'

/** How an import ended. */
export type ImportOutcome = 'applied' | 'unchanged' | 'dry_run' | 'invalid' | 'failed'

/** The events. */
export interface Telemetry {
  loginFailed(): void
  importFinished(event: { source: ImportSource; outcome: ImportOutcome; summary?: Record<string, number>; backup?: string | null; error?: string }): void
}

/** Telemetry that goes nowhere (tests, CLI). */
export const NO_TELEMETRY: Telemetry = { loginFailed: () => {}, importFinished: () => {} }
