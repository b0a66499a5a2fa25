/**
 * A destructive action in two steps: the first click asks, the second (named after what it does)
 * acts, and "Keep it" backs out. Used to delete flags and users, revoke tokens and end sessions.
 */

import { useState } from 'preact/hooks'

export function ConfirmButton({ label, confirm, onConfirm }: { label: string; confirm: string; onConfirm: () => void | Promise<void> }) {
  const [asking, setAsking] = useState(false)
  if (!asking)
    return (
      <button type="button" class="danger" onClick={() => setAsking(true)}>
        {label}
      </button>
    )
  return (
    <span class="confirm">
      <button
        type="button"
        class="danger"
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
