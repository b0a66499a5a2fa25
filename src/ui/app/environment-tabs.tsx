/**
 * A flag's environment tabs (docs/ui.md#a-flags-page): one tab per environment the person may read,
 * each saying the environment, the flag's on/off state there and its pending requests ("production
 * · on · 1 pending") beside the environment's colour. Choosing a tab chooses that environment for
 * the whole UI (the same choice as the `Environment` switcher), so every card of the page follows;
 * arrow keys, Home and End move between the tabs.
 */

import { useEffect, useRef } from 'preact/hooks'
import { ownValue } from '../../domain/own-property.ts'
import { grants } from '../../domain/permission.ts'
import { choose, useEnvironments } from './environment-choice.ts'
import { EnvironmentSwatch, environmentColourVar } from './environment-colour.tsx'
import { tabWords } from './environment-tab-words.ts'
import type { FlagState } from './flag-states.ts'

/** The id of the panel the tabs control (the page's per-environment part). */
export const ENVIRONMENT_PANEL = 'flag-environment-panel'

/** The id of environment `name`'s tab (its panel is labelled by it). */
export const tabId = (name: string) => `environment-tab-${name.replace(/[^\w-]/g, '_')}`

// choosing remounts the page (it is keyed by the environment): the new tab takes the focus back
let refocus = false

export function EnvironmentTabs({
  permissions,
  states,
  pending,
}: {
  permissions: readonly string[]
  states: Record<string, FlagState> | null
  pending: ReadonlyMap<string, number>
}) {
  const { list, current } = useEnvironments()
  const readable = list.filter((e) => grants(permissions, 'flag:read', e.name))
  const selected = useRef<HTMLButtonElement>(null)
  useEffect(() => {
    if (refocus && selected.current) {
      refocus = false
      selected.current.focus()
    }
  })
  if (readable.length === 0 || current === undefined) return null
  const pick = (name: string) => {
    if (name === current) return
    refocus = true
    choose(name)
  }
  const onKey = (e: KeyboardEvent) => {
    const at = readable.findIndex((x) => x.name === current)
    const to =
      e.key === 'ArrowRight' ? at + 1 : e.key === 'ArrowLeft' ? at - 1 : e.key === 'Home' ? 0 : e.key === 'End' ? readable.length - 1 : null
    if (to === null) return
    e.preventDefault()
    const next = readable[(to + readable.length) % readable.length]
    if (next) pick(next.name)
  }
  return (
    <div class="env-tabs" role="tablist" aria-label="Environments of this flag" onKeyDown={onKey}>
      {readable.map((e) => {
        const chosen = e.name === current
        const state = ownValue(states ?? undefined, e.name) as FlagState | undefined
        return (
          <button
            key={e.name}
            type="button"
            role="tab"
            id={tabId(e.name)}
            ref={chosen ? selected : undefined}
            aria-selected={chosen}
            aria-controls={chosen ? ENVIRONMENT_PANEL : undefined}
            tabIndex={chosen ? 0 : -1}
            class={e.protected ? 'protected' : undefined}
            style={{ '--env-color': environmentColourVar(e.name) }}
            onClick={() => pick(e.name)}
          >
            <EnvironmentSwatch name={e.name} />
            {tabWords(e.name, state === undefined ? undefined : state.enabled !== false, pending.get(e.name) ?? 0)}
          </button>
        )
      })}
    </div>
  )
}
