/** A labelled form field with the service's own message for it underneath (docs/ui.md). */

import type { ComponentChildren } from 'preact'

export function Field({
  id,
  label,
  error,
  children,
}: {
  id: string
  label: string
  error?: string | undefined
  children: ComponentChildren
}) {
  return (
    <div class="field">
      <label for={id}>{label}</label>
      {children}
      {error && (
        <p class="error field-error" role="alert">
          {error}
        </p>
      )}
    </div>
  )
}
