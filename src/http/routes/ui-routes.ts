/**
 * The web UI (contract §17): `GET /` redirects to `/ui/`; every page under `/ui/` is the one HTML
 * document of the app (no-store, with a Content-Security-Policy that allows only this origin and no
 * inline script); `/ui/assets/<name>-<hash>.<ext>` are the bundled scripts and styles, cacheable for
 * good because their names change with their content.
 */

import { Elysia } from 'elysia'
import { bundleUi } from '../../ui/bundle-ui.ts' with { type: 'macro' }
import { finalResponse } from '../json-response.ts'

const UI = bundleUi()

/** Only this origin; no inline scripts or styles; no framing; no plugins. */
export const UI_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** The UI routes. */
export function uiRoutes() {
  const assets = new Map(UI.assets.map((a) => [a.name, a]))
  const page = (request: Request) =>
    finalResponse(request, UI.html, 200, {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': UI_CSP,
      'referrer-policy': 'no-referrer',
    })
  const toUi = (request: Request) => finalResponse(request, null, 302, { location: '/ui/', 'cache-control': 'no-store' })
  return (
    new Elysia({ name: 'ui-routes' })
      .get('/', ({ request }) => toUi(request))
      // Elysia routes /ui and /ui/ alike: the bare one is sent to the slash, so relative URLs work
      .get('/ui/', ({ request }) => (new URL(request.url).pathname === '/ui' ? toUi(request) : page(request)))
      .get('/ui/assets/:file', ({ params, request }) => {
        const asset = assets.get(params.file)
        if (!asset)
          return finalResponse(request, 'not found', 404, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' })
        return finalResponse(request, asset.text, 200, {
          'content-type': asset.type,
          'cache-control': 'public, max-age=31536000, immutable',
        })
      })
      .get('/ui/*', ({ request }) => page(request))
  )
}
