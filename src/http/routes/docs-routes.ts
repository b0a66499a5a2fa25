/**
 * GET /api/openapi.json and GET /api/docs: the document, and a Swagger UI explorer over it whose
 * script and stylesheet are served from the binary itself, so it works with no internet access.
 */

import { type AnyElysia, Elysia } from 'elysia'
import cssPath from 'swagger-ui-dist/swagger-ui.css' with { type: 'file' }
import bundlePath from 'swagger-ui-dist/swagger-ui-bundle.js' with { type: 'file' }
import { buildOpenApiDocument } from '../openapi-document.ts'
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
  <script>
    window.ui = SwaggerUIBundle({ url: '/api/openapi.json', dom_id: '#swagger-ui', deepLinking: true, persistAuthorization: true })
  </script>
</body>
</html>
`

/** The documentation routes over `app` (the document is built once, on first request). */
export function docsRoutes(app: AnyElysia) {
  let document: string | undefined
  const asset = (path: string, type: string) => () => new Response(Bun.file(path), { headers: { 'content-type': type } })
  return new Elysia({ name: 'docs-routes' })
    .get(
      '/api/openapi.json',
      () => {
        document ??= JSON.stringify(buildOpenApiDocument(app))
        return new Response(document, { headers: { 'content-type': 'application/json; charset=utf-8' } })
      },
      { query: NoQuery },
    )
    .get('/api/docs', () => new Response(PAGE, { headers: { 'content-type': 'text/html; charset=utf-8' } }), { query: NoQuery })
    .get('/api/docs/swagger-ui-bundle.js', asset(bundlePath, 'text/javascript; charset=utf-8'))
    .get('/api/docs/swagger-ui.css', asset(cssPath, 'text/css; charset=utf-8'))
}
