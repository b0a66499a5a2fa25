/**
 * GET /api/openapi.json and GET /api/docs: the document, and a Swagger UI explorer over it whose
 * script and stylesheet are served from the binary itself, so it works with no internet access.
 */

import cssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import bundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import { customAnswer } from '../answers.ts'
import { JSON_TYPE } from '../error-handler.ts'
import { buildOpenApiDocument } from '../openapi-document.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { NoQuery } from '../schemas/common-schemas.ts'

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>flagd API</title>
  <link rel="stylesheet" href="/api/docs/swagger-ui.css">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/api/docs/swagger-ui-bundle.js"></script>
  <script src="/api/docs/explorer.js"></script>
</body>
</html>
`

// a token pasted into the explorer lives only as long as the page: never kept in localStorage
const INIT =
  "window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: false })\n"

/**
 * The explorer's own origin only, no inline script, and no framing (a page that frames it could
 * trick a user into sending requests with a pasted token). Swagger UI sets style attributes, hence
 * inline styles, and draws some icons as data: images.
 */
export const DOCS_CSP =
  "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

/** The documentation routes over every route of the app (the document is built once, on first request). */
export function docsRoutes(routes: () => readonly RouteSpec[]): RouteSpec[] {
  let document: string | undefined
  const asset = (name: string, file: string, type: string) =>
    route({
      method: 'GET',
      path: `/api/docs/${name}`,
      authenticate: false,
      handle: (c) => customAnswer(c.id, Bun.file(file), 200, { 'content-type': type }),
    })
  return [
    route({
      method: 'GET',
      path: '/api/openapi.json',
      compress: true,
      authenticate: false,
      query: NoQuery,
      handle(c) {
        document ??= JSON.stringify(buildOpenApiDocument(routes()))
        return customAnswer(c.id, document, 200, { 'content-type': JSON_TYPE })
      },
    }),
    route({
      method: 'GET',
      path: '/api/docs',
      authenticate: false,
      query: NoQuery,
      handle: (c) =>
        customAnswer(c.id, PAGE, 200, {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': DOCS_CSP,
          'x-frame-options': 'DENY',
          'referrer-policy': 'no-referrer',
        }),
    }),
    route({
      method: 'GET',
      path: '/api/docs/explorer.js',
      authenticate: false,
      handle: (c) => customAnswer(c.id, INIT, 200, { 'content-type': 'text/javascript; charset=utf-8' }),
    }),
    asset('swagger-ui-bundle.js', bundlePath, 'text/javascript; charset=utf-8'),
    asset('swagger-ui.css', cssPath, 'text/css; charset=utf-8'),
  ]
}
