/**
 * A destructive action in two steps: the first click asks, the second (named after what it does)
 * acts, and "Keep it" backs out. The first is outlined, the second filled (docs/ui.md#colours). Used to delete flags and users, revoke tokens, end sessions and
 * roll a flag back.
 */

import { useState } from 'preact/hooks'

export function ConfirmButton({
  label,
  confirm,
  onConfirm,
  quiet = false,
}: {
  label: string
  confirm: string
  onConfirm: () => void | Promise<void>
  /** A small, plain first button, for actions offered on every row (a rollback per history entry). */
  quiet?: boolean
}) {
  const [asking, setAsking] = useState(false)
  if (!asking)
    return (
      <button type="button" class={quiet ? 'plain small' : 'danger'} onClick={() => setAsking(true)}>
        {label}
      </button>
    )
  return (
    <span class="confirm">
      <button
        type="button"
        class="danger confirming"
        onClick={async () => {
          await onConfirm()
          setAsking(false)
        }}
      >
        {confirm}
      </button>
      <button type="button" class="plain" onClick={() => setAsking(false)}>
        Keep it
      </button>
    </span>
  )
}
