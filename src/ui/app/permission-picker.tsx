/**
 * Permissions as groups of labelled checkboxes (docs/api.md#permissions names), shared by the users
 * and the tokens pages: the permissions that cover every environment, then, when there are several
 * environments, the flag permissions of each one (`flag:write@staging`, docs/environments.md#permissions).
 * `offered` limits the boxes to what the signed-in principal may hand out.
 */

import { ENVIRONMENT_PERMISSIONS, PERMISSIONS } from '../../domain/permission.ts'
import type { Permission } from './api.ts'
import { useEnvironments } from './environment-choice.ts'

export function PermissionPicker({
  id,
  legend,
  value,
  onChange,
  offered = (p) => (PERMISSIONS as readonly string[]).includes(p) || p.includes('@'),
  error,
}: {
  id: string
  legend: string
  value: readonly Permission[]
  onChange: (next: Permission[]) => void
  /** Whether the signed-in principal may hand out this permission (its own, environment by environment). */
  offered?: (permission: string) => boolean
  error?: string | undefined
}) {
  const { list } = useEnvironments()
  const scoped = list.length < 2 ? [] : list.flatMap((e) => ENVIRONMENT_PERMISSIONS.map((p) => `${p}@${e.name}`))
  // unscoped ones in documentation order, then each environment's, as the service stores them
  const order = [...PERMISSIONS, ...scoped]
  const toggle = (p: string, on: boolean) =>
    onChange([...order.filter((q) => (q === p ? on : value.includes(q))), ...value.filter((q) => !order.includes(q))])
  // ids by position: an environment's name may hold characters a selector would read otherwise
  const boxId = (p: string) => `${id}-${order.indexOf(p)}`
  const box = (p: string) => (
    <span class="field inline" key={p}>
      <input type="checkbox" id={boxId(p)} checked={value.includes(p)} onChange={(e) => toggle(p, e.currentTarget.checked)} />
      <label for={boxId(p)}>{p}</label>
    </span>
  )
  return (
    <fieldset class="many-of permissions">
      <legend>{legend}</legend>
      {PERMISSIONS.filter(offered).map(box)}
      {list.length > 1 &&
        list.map((e) => {
          const mine = ENVIRONMENT_PERMISSIONS.map((p) => `${p}@${e.name}`).filter(offered)
          return (
            mine.length > 0 && (
              <fieldset key={e.name} class="many-of">
                <legend>In {e.name} only</legend>
                {mine.map(box)}
              </fieldset>
            )
          )
        })}
      {error && (
        <p class="error field-error" role="alert">
          {error}
        </p>
      )}
    </fieldset>
  )
}
