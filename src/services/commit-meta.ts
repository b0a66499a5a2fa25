/** What a service records with each change: the caller, and through what it came. */

import type { Caller } from '../domain/principal.ts'
import type { CommitMeta, Source } from '../storage/store.ts'

/**
 * The commit meta of a caller's change. A system principal names its own source (`cli`,
 * `drop-folder`, `bootstrap`, `maintenance`); users and tokens act through `viaApi` (`api`, `ui`
 * when the web UI sent the request, or the import route's `import-upload` / `import-url`); a
 * rollback is `rollback`, and a scheduled change `schedule`, whoever makes it.
 */
export function commitMeta(caller: Caller, viaApi: Source = 'api', environment?: string): CommitMeta {
  const p = caller.principal
  // a rollback is recorded as one whoever made it; otherwise a system part names its own source
  const own = viaApi === 'rollback' || viaApi === 'schedule'
  const source = p.kind === 'system' && !own ? p.name : viaApi === 'api' && caller.via === 'ui' ? 'ui' : viaApi
  return { principal: p, source, requestId: caller.requestId, ...(environment !== undefined ? { environment } : {}) }
}
