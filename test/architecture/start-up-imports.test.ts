/**
 * What the daemon loads at start (docs/performance.md#idle-memory): the modules `src/main.ts` reaches
 * through static imports are evaluated at start in the compiled binary, so what only an optional
 * port or a command needs is imported dynamically where it is used. The gRPC stack and protobufjs
 * serve the evaluation and sync ports, off unless configured; loading them cost about 6 MB of idle memory.
 */

import { expect, test } from 'bun:test'
import { join } from 'node:path'

type Inputs = Record<string, { imports: { path: string; kind: string }[] }>

test('the gRPC stack and protobufjs are not reached by static imports from the entry point', async () => {
  const built = await Bun.build({ entrypoints: [join(import.meta.dir, '../../src/main.ts')], target: 'bun', metafile: true })
  const inputs = (built as unknown as { metafile: { inputs: Inputs } }).metafile.inputs
  const entry = Object.keys(inputs).find((path) => path.endsWith('src/main.ts')) as string
  const reached = new Set<string>()
  const from = new Map<string, string>()
  const queue = [entry]
  for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
    if (reached.has(path)) continue
    reached.add(path)
    for (const i of inputs[path]?.imports ?? [])
      if (i.kind === 'import-statement' && !reached.has(i.path)) {
        if (!from.has(i.path)) from.set(i.path, path)
        queue.push(i.path)
      }
  }
  // the chain of imports that reaches a module, for the failure's message
  const chain = (path: string) => {
    const out = [path]
    for (let at = from.get(path); at !== undefined; at = from.get(at)) out.unshift(at)
    return out.join(' -> ')
  }
  const heavy = [...reached].filter((path) => /node_modules\/(protobufjs|@grpc\/grpc-js)\//.test(path)).map(chain)
  expect(heavy.slice(0, 1)).toEqual([])
}, 30_000)
