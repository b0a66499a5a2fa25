/**
 * Environment colours in the UI (docs/ui.md#colours): each environment's colour, as the service
 * reports it, is set on `:root` as `--env-<name>`, so any stylesheet rule or component (the switcher,
 * column headers, badges) can use it with `environmentColourVar`; `EnvironmentSwatch` is the small
 * dot shown beside an environment's name, never in its place.
 */

/** The custom property that holds the colour of environment `name` (unescaped, as `setProperty` takes it). */
export function environmentColourProperty(name: string): string {
  return `--env-${name}`
}

/** A CSS value for the colour of environment `name`, falling back to the muted text colour before the list is known. */
export function environmentColourVar(name: string): string {
  return `var(--env-${CSS.escape(name)}, var(--text-muted))`
}

/** Sets `--env-<name>` on `:root` for each environment, and removes those of environments gone. */
export function applyEnvironmentColours(list: readonly { name: string; color?: string }[]): void {
  const root = document.documentElement.style
  for (let i = root.length - 1; i >= 0; i--) {
    const property = root.item(i)
    if (property.startsWith('--env-')) root.removeProperty(property)
  }
  for (const e of list) if (e.color) root.setProperty(environmentColourProperty(e.name), e.color)
}

/** The colour dot of environment `name`: decoration beside its name (hidden from assistive technology). */
export function EnvironmentSwatch({ name }: { name: string }) {
  return <span class="env-swatch" aria-hidden="true" style={{ '--env-color': environmentColourVar(name) }} />
}
