/**
 * Events the services report for logs and metrics, without knowing about either: the composition
 * root connects them to the logger and the Prometheus registry.
 */

import type { Source } from '../storage/store.ts'

/** Where an import came from: the upload route, the URL route, the drop folder or the CLI. */
export type ImportSource = Extract<Source, 'import-upload' | 'import-url' | 'drop-folder' | 'cli'>

/** How an import ended. */
export type ImportOutcome = 'applied' | 'unchanged' | 'dry_run' | 'invalid' | 'failed'

/** The events. */
export interface Telemetry {
  loginFailed(): void
  /** `origin` names the file or URL the document came from, when there is one. */
  importFinished(event: {
    source: ImportSource
    outcome: ImportOutcome
    summary?: Record<string, number>
    backup?: string | null
    error?: string
    origin?: string
  }): void
}

/** Telemetry that goes nowhere (tests, CLI). */
export const NO_TELEMETRY: Telemetry = { loginFailed: () => {}, importFinished: () => {} }
