/**
 * Which methods a path supports, from the routes Elysia registered. Elysia answers an unknown
 * method as "not found"; this table lets the error handler tell 404 from 405 and fill `Allow`.
 */

import { BoundedMap } from '../domain/bounded-map.ts'

/** A registered route as Elysia lists it. */
export interface RouteEntry {
  method: string
  path: string
}

const TEMPLATE_CACHE = 10_000

interface Pattern {
  regex: RegExp
  methods: Set<string>
}

/** Elysia's `/api/flags/*` and `/:userId` as the OpenAPI document writes them. */
export function documentedTemplate(path: string): string {
  return path.replace(/\/\*$/, '/{flagName}').replace(/:([A-Za-z0-9_]+)/g, '{$1}')
}

function toRegex(path: string): RegExp {
  const body = path
    .split('/')
    .map((seg) => (seg === '*' ? '.*' : seg.startsWith(':') ? '[^/]+' : seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
    .join('/')
  return new RegExp(`^${body}/?$`)
}

/** Answers which methods exist for a path. */
export interface RouteTable {
  allowed(pathname: string): string[]
  /**
   * The route template serving `method pathname`, in the OpenAPI document's style
   * (`/api/flags/{flagName}`, `/api/users/{userId}`), for metrics labels; `undefined` when none.
   */
  template(method: string, pathname: string): string | undefined
}

/** Builds the table from Elysia's `app.routes`. */
export function createRouteTable(routes: readonly RouteEntry[]): RouteTable {
  const patterns = new Map<string, Pattern>()
  // Metrics ask for the template of every request; remember answers (bounded) instead of rescanning.
  const templates = new BoundedMap<string, string | undefined>(TEMPLATE_CACHE)
  for (const r of routes) {
    const p = patterns.get(r.path) ?? { regex: toRegex(r.path), methods: new Set<string>() }
    p.methods.add(r.method.toUpperCase())
    patterns.set(r.path, p)
  }
  return {
    allowed(pathname) {
      const methods = new Set<string>()
      for (const p of patterns.values()) if (p.regex.test(pathname)) for (const m of p.methods) methods.add(m)
      return [...methods].sort()
    },
    template(method, pathname) {
      const key = `${method} ${pathname}`
      const hit = templates.get(key)
      if (hit !== undefined || templates.has(key)) return hit
      let found: string | undefined
      for (const [path, p] of patterns) {
        if (p.methods.has(method) && p.regex.test(pathname)) {
          found = documentedTemplate(path)
          break
        }
      }
      templates.set(key, found)
      return found
    },
  }
}
