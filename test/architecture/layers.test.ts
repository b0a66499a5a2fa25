/**
 * The layers of `../shared/style.md`, checked over the import graph of `src/`: every import points
 * down (or stays within its layer), and the transports never reach past the services. A new import
 * against the direction fails here with the file and the arrow, so the shape stays as drawn:
 *
 *   domain < io, version, config < observability < storage < services < ui (the bundle)
 *     < http, watcher, control, sync < app (app.ts, daemon.ts, admin-access.ts) < cli < main
 */

import { expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const SRC = resolve(import.meta.dir, '../../src')

const RANK: Record<string, number> = {
  domain: 0,
  io: 1,
  version: 1,
  'config-schema': 1,
  'config-oidc': 1,
  config: 2,
  observability: 3,
  storage: 4,
  services: 5,
  ui: 6,
  http: 7,
  watcher: 7,
  control: 7,
  sync: 7,
  app: 8,
  daemon: 8,
  'admin-access': 8,
  'system-clock': 8,
  cli: 9,
  main: 10,
}

/** Pairs that the ranks would allow but the style forbids: the transports use services, never storage. */
const FORBIDDEN: [string, string][] = [
  ['http', 'storage'],
  ['watcher', 'storage'],
  ['control', 'storage'],
  ['sync', 'storage'],
  ['cli', 'sync'],
  ['cli', 'storage'],
  ['cli', 'http'],
  ['cli', 'control'],
  ['cli', 'watcher'],
]

/** The layer of a file under src/: its top folder, or its own name for top-level files. */
function layerOf(file: string): string {
  const parts = relative(SRC, file).split('/')
  if (parts.length === 1) return (parts[0] as string).replace(/\.tsx?$/, '')
  // the browser app under ui/app is its own world: it may import only domain code and its own files
  return parts[0] === 'ui' && parts[1] === 'app' ? 'ui-app' : (parts[0] as string)
}

/** Why an import from layer `from` to layer `to` is against the direction, or undefined. */
function violation(from: string, to: string): string | undefined {
  if (from === to) return undefined
  if (from === 'ui-app') return to === 'domain' ? undefined : 'the browser app imports only domain code'
  if (to === 'ui-app') return from === 'ui' ? undefined : 'only the UI bundle may import the browser app'
  const a = RANK[from]
  const b = RANK[to]
  if (a === undefined || b === undefined) return `unknown layer (${a === undefined ? from : to}): add it to RANK`
  if (b > a) return 'upward'
  if (FORBIDDEN.some(([f, t]) => f === from && t === to)) return `${from} never imports ${to} (style.md)`
  return undefined
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : /\.tsx?$/.test(e.name) ? [join(dir, e.name)] : [],
  )
}

const IMPORT = /^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"](\.{1,2}\/[^'"]+)['"]/gm

test('every import in src/ points down the layers', () => {
  const problems: string[] = []
  let imports = 0
  for (const file of sourceFiles(SRC)) {
    const text = readFileSync(file, 'utf8')
    for (const m of text.matchAll(IMPORT)) {
      const target = resolve(dirname(file), m[1] as string)
      if (!target.startsWith(`${SRC}/`)) continue // package.json for the version
      imports++
      const why = violation(layerOf(file), layerOf(target))
      if (why) problems.push(`${relative(SRC, file)} → ${relative(SRC, target)}: ${why}`)
    }
  }
  expect(imports).toBeGreaterThan(300) // the scan found the graph
  expect(problems).toEqual([])
})

test('the check itself: arrows up, forbidden pairs and the browser app are caught', () => {
  expect(violation('storage', 'services')).toBe('upward')
  expect(violation('observability', 'services')).toBe('upward')
  expect(violation('cli', 'storage')).toContain('never imports')
  expect(violation('http', 'storage')).toContain('never imports')
  expect(violation('services', 'storage')).toBeUndefined()
  expect(violation('cli', 'app')).toBeUndefined()
  expect(violation('ui-app', 'http')).toContain('only domain')
  expect(violation('http', 'ui')).toBeUndefined()
  expect(layerOf(join(SRC, 'app.ts'))).toBe('app')
  expect(layerOf(join(SRC, 'ui/app/main.tsx'))).toBe('ui-app')
  expect(layerOf(join(SRC, 'http/routes/flag-routes.ts'))).toBe('http')
})
