/**
 * The web UI (docs/ui.md): `GET /` redirects to `/ui/`; every page under `/ui/` is the one HTML
 * document of the app (no-store, with a Content-Security-Policy that allows only this origin and no
 * inline script); `/ui/assets/<name>-<hash>.<ext>` are the bundled scripts and styles, cacheable for
 * good because their names change with their content.
 */

import { bundleUi } from '../../ui/bundle-ui.ts' with { type: 'macro' }
import { customAnswer } from '../answers.ts'
import type { RequestContext } from '../request-context.ts'
import { type RouteSpec, route } from '../route-spec.ts'

const UI = bundleUi()

/** Only this origin; no inline scripts or styles; no framing; no plugins. */
export const UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/**
 * The icon browsers ask every site for at `/favicon.ico`: a flag, as SVG (every browser the UI
 * supports reads an SVG icon; the page links it with its type). Without it each page logged a 404.
 */
const FAVICON = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="6" fill="#1f4f8f"/><path d="M10 6v21" stroke="#fff" stroke-width="2.5" stroke-linecap="round"/><path d="M11 7h13l-3 4.5 3 4.5H11z" fill="#ffd24a"/></svg>`

/** The UI routes. */
export function uiRoutes(): RouteSpec[] {
  const assets = new Map(UI.assets.map((a) => [a.name, a]))
  const page = (c: RequestContext) =>
    customAnswer(c.id, UI.html, 200, {
      'content-type': 'text/html; charset=utf-8',
      'content-security-policy': UI_CSP,
      'referrer-policy': 'no-referrer',
    })
  const toUi = (c: RequestContext) => customAnswer(c.id, null, 302, { location: '/ui/' })
  return [
    route({ method: 'GET', path: '/', authenticate: false, handle: toUi }),
    // /ui and /ui/ route alike: the bare one is sent to the slash, so relative URLs work
    route({ method: 'GET', path: '/ui/', authenticate: false, handle: (c) => (c.path === '/ui' ? toUi(c) : page(c)) }),
    route({
      method: 'GET',
      path: '/ui/assets/:file',
      authenticate: false,
      handle(c) {
        const asset = assets.get(c.params.file ?? '')
        if (!asset) return customAnswer(c.id, 'not found', 404, { 'content-type': 'text/plain; charset=utf-8' })
        return customAnswer(c.id, asset.text, 200, { 'content-type': asset.type, 'cache-control': 'public, max-age=31536000, immutable' })
      },
    }),
    route({ method: 'GET', path: '/ui/*', authenticate: false, handle: page }),
    route({
      method: 'GET',
      path: '/favicon.ico',
      authenticate: false,
      handle: (c) => customAnswer(c.id, FAVICON, 200, { 'content-type': 'image/svg+xml', 'cache-control': 'public, max-age=86400' }),
    }),
  ]
}
