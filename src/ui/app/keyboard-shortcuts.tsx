/**
 * Keyboard shortcuts (docs/ui.md#flags-page-counters-and-shortcuts): `?` on every page opens a
 * dialog listing them; on the Flags page `/` focuses the search, `j`/`k` move between flag rows and
 * `t` toggles the focused row's switch in the chosen environment, by clicking it (so it does what a
 * click does, a review where the environment is protected). Keys typed into a field, or pressed with
 * Ctrl, Alt or Meta, are left alone.
 */

import { useEffect, useRef, useState } from 'preact/hooks'

/** The shortcuts, as the dialog lists them. */
const SHORTCUTS: readonly [string, string][] = [
  ['?', 'show these shortcuts'],
  ['/', 'search flags (Flags page)'],
  ['j', 'next flag row (Flags page)'],
  ['k', 'previous flag row (Flags page)'],
  ['t', "toggle the focused row's switch in the chosen environment (Flags page)"],
  ['Esc', 'close a dialog'],
]

/** Whether key event `e` is meant for something else: typing in a field, a modifier, a dialog's own keys. */
export function notAShortcut(e: KeyboardEvent): boolean {
  if (e.defaultPrevented || e.ctrlKey || e.metaKey || e.altKey || e.isComposing) return true
  const target = e.target as HTMLElement | null
  if (!target || typeof target.closest !== 'function') return false
  return target.isContentEditable || target.closest('input, textarea, select, dialog, [role="dialog"]') !== null
}

/** Calls `handle` for every key pressed anywhere in the page until unmounted. */
function useKeys(handle: (e: KeyboardEvent) => void) {
  const latest = useRef(handle)
  latest.current = handle
  useEffect(() => {
    const listener = (e: KeyboardEvent) => latest.current(e)
    document.addEventListener('keydown', listener)
    return () => document.removeEventListener('keydown', listener)
  }, [])
}

/** The `?` dialog listing the shortcuts; Escape closes it and focus goes back where it was. */
export function ShortcutsHelp() {
  const dialog = useRef<HTMLDialogElement>(null)
  const [open, setOpen] = useState(false)
  const back = useRef<HTMLElement | null>(null)
  useKeys((e) => {
    if (e.key !== '?' || open || notAShortcut(e)) return
    e.preventDefault()
    back.current = document.activeElement as HTMLElement | null
    setOpen(true)
  })
  useEffect(() => {
    if (open && dialog.current && !dialog.current.open) dialog.current.showModal()
  }, [open])
  const closed = () => {
    setOpen(false)
    back.current?.focus()
    back.current = null
  }
  if (!open) return null
  return (
    <dialog ref={dialog} class="shortcuts" aria-labelledby="shortcuts-title" onClose={closed}>
      <h2 id="shortcuts-title">Keyboard shortcuts</h2>
      <dl>
        {SHORTCUTS.map(([key, what]) => (
          <div key={key}>
            <dt>
              <kbd>{key}</kbd>
            </dt>
            <dd>{what}</dd>
          </div>
        ))}
      </dl>
      <form method="dialog">
        <button type="submit">Close</button>
      </form>
    </dialog>
  )
}

/** The flag rows a person can see, in order. */
const rows = () => [...document.querySelectorAll<HTMLTableRowElement>('tr.flag')].filter((tr) => !tr.hidden)

/** The Flags page's shortcuts: `/`, `j`, `k` and `t`. */
export function useFlagShortcuts() {
  useKeys((e) => {
    if (notAShortcut(e)) return
    if (e.key === '/') {
      e.preventDefault()
      document.getElementById('search')?.focus()
      return
    }
    if (e.key === 'j' || e.key === 'k') {
      const all = rows()
      const at = all.findIndex((tr) => tr.contains(document.activeElement))
      const next = at < 0 ? (e.key === 'j' ? 0 : all.length - 1) : Math.min(Math.max(at + (e.key === 'j' ? 1 : -1), 0), all.length - 1)
      const row = all[next]
      if (!row) return
      e.preventDefault()
      row.focus()
      return
    }
    if (e.key === 't') {
      const row = (document.activeElement as HTMLElement | null)?.closest('tr.flag')
      const toggle = row?.querySelector<HTMLButtonElement>('td.env-cell.chosen [role="switch"]')
      if (!toggle) return
      e.preventDefault()
      // the switch's own click: whatever a click does there (a review in a protected environment)
      toggle.click()
    }
  })
}
