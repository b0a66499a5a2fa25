/**
 * The environment the UI acts in (docs/ui.md#environments): chosen with the `Environment` switcher
 * on every page and remembered per browser (local storage). Every request about flags, their usage,
 * segments' uses and evaluation carries it as `?environment=` (one place, the client's middleware
 * below), so each page shows and edits that environment without knowing about it; a request that
 * names an environment itself (a column of another one, a comparison) keeps its own.
 */

import { useEffect, useState } from 'preact/hooks'
import { grants, type Permission } from '../../domain/permission.ts'
import { api } from './api.ts'
import { applyEnvironmentColours } from './environment-colour.tsx'

/** An environment as `GET /api/environments` lists it. */
export interface Environment {
  name: string
  description: string
  protected: boolean
  requiredApprovals: number
  /** Its colour (docs/ui.md#colours). */
  color: string
  default: boolean
}

const KEY = 'flagd.environment'
let environments: Environment[] = []
let chosen: string | null = localStorage.getItem(KEY)
const listeners = new Set<() => void>()
const tell = () => {
  for (const l of listeners) l()
}

/** Paths whose requests act in the chosen environment (not creating or deleting a flag, which acts in all). */
function actsInEnvironment(method: string, path: string): boolean {
  if (path.startsWith('/ofrep/v1/evaluate/')) return true
  if (path === '/api/usage' || path.startsWith('/api/segments')) return method === 'GET'
  if (path === '/api/flags') return method === 'GET'
  return path.startsWith('/api/flags/') && method !== 'DELETE' && !path.endsWith('/environments')
}

api.use({
  async onRequest({ request }) {
    const env = current()
    // the default environment is what a request naming none acts in
    if (env === undefined || environments.find((e) => e.name === env)?.default) return request
    const url = new URL(request.url)
    if (url.searchParams.has('environment') || !actsInEnvironment(request.method, url.pathname)) return request
    url.searchParams.set('environment', env)
    // a body is carried as text: a Request made from another one's stream needs `duplex`, which not every browser takes
    const body = request.method === 'GET' || request.method === 'HEAD' ? undefined : await request.text()
    return new Request(url, { method: request.method, headers: request.headers, body, signal: request.signal })
  },
})

/** The chosen environment's name, once the list is known (`undefined` before: the service's default). */
export function current(): string | undefined {
  if (environments.length === 0) return undefined
  return environments.some((e) => e.name === chosen) ? (chosen as string) : environments.find((e) => e.default)?.name
}

/** The environment named `name` as last loaded, or `undefined` (outside a component: no re-render on change). */
export function environmentNamed(name: string | undefined): Environment | undefined {
  return environments.find((e) => e.name === name)
}

/** The protected environments as last loaded, in the order they were created (outside a component: no re-render on change). */
export function protectedEnvironments(): Environment[] {
  return environments.filter((e) => e.protected)
}

/** Chooses `name` (remembered in this browser). */
export function choose(name: string): void {
  chosen = name
  localStorage.setItem(KEY, name)
  tell()
}

/**
 * Loads the environments; `permissions` (the signed-in principal's) picks, when the remembered one
 * is gone or unreadable, the default environment if readable, else the first readable one.
 */
export async function loadEnvironments(permissions: readonly string[]): Promise<void> {
  const { data } = await api.GET('/api/environments')
  environments = (data as Environment[] | undefined) ?? []
  applyEnvironmentColours(environments)
  const readable = environments.filter((e) => grants(permissions, 'flag:read', e.name))
  if (!readable.some((e) => e.name === chosen)) chosen = (readable.find((e) => e.default) ?? readable[0])?.name ?? null
  tell()
}

/** The environments and the chosen one, re-rendering when either changes. */
export function useEnvironments(): { list: Environment[]; current: string | undefined } {
  const [, setTick] = useState(0)
  useEffect(() => {
    const update = () => setTick((n) => n + 1)
    listeners.add(update)
    return () => {
      listeners.delete(update)
    }
  }, [])
  return { list: environments, current: current() }
}

/** Whether `permissions` hold `permission` in environment `env` (unscoped, or `…@env`). */
export function holdsIn(permissions: readonly string[], permission: Permission, env: string | undefined): boolean {
  return grants(permissions, permission, env)
}
