/**
 * Bundles the web UI (`src/ui/app`) for the browser. Imported as a Bun macro by the UI routes, so it
 * runs when the server source is transpiled (from source: on start; `bun build --compile`: once, at
 * build time) and the assets end up as strings inside the binary: no files to ship, no internet.
 * Asset names carry a content hash, so browsers may cache them for good while the HTML is no-store.
 * (A macro may not call Bun.build, which would wait on the bundler running the macro; so it runs the
 * `bun build` command line.)
 */

import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** The UI as the server serves it. */
export interface UiBundle {
  html: string
  assets: { name: string; type: string; text: string }[]
}

const TYPES: Record<string, string> = { js: 'text/javascript; charset=utf-8', css: 'text/css; charset=utf-8' }

/** Bundles `src/ui/app/main.tsx` (see module comment). */
export function bundleUi(): UiBundle {
  const out = mkdtempSync(join(tmpdir(), 'flagd-ui-'))
  try {
    const entry = join(import.meta.dir, 'app/main.tsx')
    const args = [
      'build',
      entry,
      '--outdir',
      out,
      '--target',
      'browser',
      '--minify',
      '--entry-naming',
      '[name]-[hash].[ext]',
      '--asset-naming',
      '[name]-[hash].[ext]',
      '--chunk-naming',
      '[name]-[hash].[ext]',
    ]
    const run = Bun.spawnSync([process.execPath, ...args], {
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, NODE_ENV: 'production' },
    })
    if (run.exitCode !== 0) {
      // a macro's exception reaches the person only as "cannot coerce Exception": say it here too
      const reason = `bundling the web UI failed: ${run.stderr.toString()}`
      console.error(reason)
      throw new Error(reason)
    }
    const assets = readdirSync(out).map((name) => ({
      name,
      type: TYPES[name.split('.').pop() ?? ''] ?? 'application/octet-stream',
      text: readFileSync(join(out, name), 'utf8'),
    }))
    const scripts = assets.filter((a) => a.name.endsWith('.js')).map((a) => `<script type="module" src="/ui/assets/${a.name}"></script>`)
    const styles = assets.filter((a) => a.name.endsWith('.css')).map((a) => `<link rel="stylesheet" href="/ui/assets/${a.name}">`)
    const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>flagd</title>
<link rel="icon" type="image/svg+xml" href="/favicon.ico">
${styles.join('\n')}
${scripts.join('\n')}
</head>
<body>
<div id="app"></div>
</body>
</html>
`
    return { html, assets }
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
}
