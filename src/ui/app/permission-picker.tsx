/**
 * Permissions as a group of labelled checkboxes (docs/api.md#permissions names), shared by the users and the
 * tokens pages. `offered` limits the boxes to what the signed-in principal may hand out.
 */

import { PERMISSIONS } from '../../domain/permission.ts'
import type { Permission } from './api.ts'

export function PermissionPicker({
  id,
  legend,
  value,
  onChange,
  offered = PERMISSIONS,
  error,
}: {
  id: string
  legend: string
  value: readonly Permission[]
  onChange: (next: Permission[]) => void
  offered?: readonly Permission[]
  error?: string | undefined
}) {
  const toggle = (p: Permission, on: boolean) => onChange(PERMISSIONS.filter((q) => (q === p ? on : value.includes(q))))
  return (
    <fieldset class="many-of permissions">
      <legend>{legend}</legend>
      {offered.map((p) => (
        <span class="field inline" key={p}>
          <input
            type="checkbox"
            id={`${id}-${p.replace(':', '-')}`}
            checked={value.includes(p)}
            onChange={(e) => toggle(p, e.currentTarget.checked)}
          />
          <label for={`${id}-${p.replace(':', '-')}`}>{p}</label>
        </span>
      ))}
      {error && (
        <p class="error field-error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  )
}
