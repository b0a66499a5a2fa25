/**
 * The head of a flag's page (docs/ui.md#a-flags-page): the way back to the list, its name, type,
 * revision, last change and description, its lifecycle line, and for an archived flag the note that
 * says so with `Restore`.
 */

import { LifecycleLine } from './lifecycle-fields.tsx'
import { localTime } from './local-time.ts'
import { navigate } from './router.ts'

export function FlagHeader({
  name,
  flag,
  canRestore,
  onRestore,
}: {
  name: string
  flag: Record<string, unknown>
  canRestore: boolean
  onRestore: () => void
}) {
  return (
    <>
      <p>
        <a
          href="/ui/"
          onClick={(e) => {
            e.preventDefault()
            navigate('')
          }}
        >
          ← All flags
        </a>
      </p>
      <h1>{name}</h1>
      <p class="meta">
        {String(flag.type)} · revision {String(flag.revision)} · updated{' '}
        <time dateTime={String(flag.updatedAt)} title={String(flag.updatedAt)}>
          {localTime(String(flag.updatedAt))}
        </time>
        {flag.description ? ` · ${String(flag.description)}` : ''}
      </p>
      <LifecycleLine flag={flag} />
      {flag.archived === true && (
        <div class="card archived-note" role="note" aria-label="Archived">
          <p>
            <strong>Archived.</strong> Every application gets FLAG_NOT_FOUND for it; its definition, its state in every environment, its
            usage and its history are kept. Restore it to change or serve it again.
          </p>
          {canRestore && (
            <button type="button" onClick={onRestore}>
              Restore
            </button>
          )}
        </div>
      )}
    </>
  )
}
