/** What a service records with each change: the caller, and through what it came. */

import type { Caller } from '../domain/principal.ts'
import type { CommitMeta, Source } from '../storage/store.ts'

/**
 * The commit meta of a caller's change. A system principal names its own source (`cli`,
 * `drop-folder`, `bootstrap`, `maintenance`); users and tokens act through `viaApi` (`api`, or the
 * import route's `import-upload` / `import-url`).
 */
export function commitMeta(caller: Caller, viaApi: Source = 'api'): CommitMeta {
  const p = caller.principal
  return { principal: p, source: p.kind === 'system' ? p.name : viaApi, requestId: caller.requestId }
}
