/** A small router over the History API: pages live under /ui/, so reloads and links work. */

import { useEffect, useState } from 'preact/hooks'

const listeners = new Set<() => void>()

/** Goes to `path` (below /ui/) without reloading. */
export function navigate(path: string): void {
  history.pushState(null, '', `/ui/${path.replace(/^\//, '')}`)
  for (const l of listeners) l()
}

/** Replaces the current query string with `search` (a filtered view's address) without a new history entry. */
export function replaceSearch(search: string): void {
  history.replaceState(null, '', `${location.pathname}${search ? `?${search}` : ''}`)
  for (const l of listeners) l()
}

/** The current path below /ui/ (`''` for the flag list), re-rendering on navigation. */
export function usePath(): string {
  const read = () => decodeURIComponent(location.pathname.replace(/^\/ui\/?/, ''))
  const [path, setPath] = useState(read)
  useEffect(() => {
    const update = () => setPath(read())
    listeners.add(update)
    addEventListener('popstate', update)
    return () => {
      listeners.delete(update)
      removeEventListener('popstate', update)
    }
  }, [])
  return path
}

/** The current query string (`?archived=true`), re-rendering on navigation. */
export function useSearch(): string {
  const [search, setSearch] = useState(location.search)
  useEffect(() => {
    const update = () => setSearch(location.search)
    listeners.add(update)
    addEventListener('popstate', update)
    return () => {
      listeners.delete(update)
      removeEventListener('popstate', update)
    }
  }, [])
  return search
}

/** Props of a link that navigates inside the app. */
export function link(path: string) {
  return {
    href: `/ui/${path}`,
    onClick: (e: MouseEvent) => {
      if (e.ctrlKey || e.metaKey || e.shiftKey) return
      e.preventDefault()
      navigate(path)
    },
  }
}
