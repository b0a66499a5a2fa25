/**
 * The `Environment` switcher on every page (docs/ui.md#environments): a native select, so it is a
 * combobox to assistive technology and keyboard users; the choice is remembered in this browser.
 * It lists the environments the signed-in principal may read; the chosen one's colour marks it
 * (docs/ui.md#colours), beside its name.
 */

import { grants } from '../../domain/permission.ts'
import { choose, useEnvironments } from './environment-choice.ts'
import { EnvironmentSwatch, environmentColourVar } from './environment-colour.tsx'

export function EnvironmentSwitcher({ permissions }: { permissions: readonly string[] }) {
  const { list, current } = useEnvironments()
  const readable = list.filter((e) => grants(permissions, 'flag:read', e.name))
  if (readable.length === 0) return null
  return (
    <span class="environment-switch" style={current ? { '--env-color': environmentColourVar(current) } : undefined}>
      <label for="environment">Environment</label>
      {current && <EnvironmentSwatch name={current} />}
      <select id="environment" value={current} onChange={(e) => choose(e.currentTarget.value)}>
        {readable.map((e) => (
          <option key={e.name} value={e.name}>
            {e.name}
            {e.default ? ' (default)' : ''}
            {e.protected ? ' · protected' : ''}
          </option>
        ))}
      </select>
    </span>
  )
}
