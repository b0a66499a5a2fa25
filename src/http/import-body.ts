/**
 * The body of `PUT /api/migrations` (docs/migrations.md#from-other-tools): JSON as every body
 * (docs/api.md#conventions), and for the tools whose files are YAML or TOML (`format=flipt`,
 * `format=gofeatureflag`) also `application/yaml`, `text/yaml` and `application/toml`, under the
 * same size limit, the same refusal of compressed bodies, and the same bounds once parsed.
 */

import { AppError, InvalidError } from '../domain/errors.ts'
import { isForeignFormat, takesText } from '../domain/foreign/foreign-formats.ts'
import { readForeignText, syntaxOfMediaType } from '../domain/foreign/foreign-text.ts'
import { readLimited } from '../io/read-limited.ts'
import { contentCodingOf, readJsonBody } from './body-reader.ts'

/** The media types a YAML or TOML file of another tool may be sent as. */
export const TEXT_BODY_TYPES = ['application/yaml', 'text/yaml', 'application/toml'] as const

/** Reads an import's body (see module comment). */
export async function readImportBody(request: Request, limit: number): Promise<unknown> {
  const syntax = syntaxOfMediaType(request.headers.get('content-type'))
  if (syntax === undefined || syntax === 'json') return readJsonBody(request, limit)
  const format = new URL(request.url).searchParams.get('format')
  if (format === null || !isForeignFormat(format) || !takesText(format)) {
    await request.body?.cancel().catch(() => {})
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `a ${syntax.toUpperCase()} body is taken with format=flipt or format=gofeatureflag only; send other files as application/json`,
    )
  }
  const coding = contentCodingOf(request.headers)
  if (coding !== undefined) {
    await request.body?.cancel().catch(() => {})
    throw new AppError(
      'UNSUPPORTED_MEDIA_TYPE',
      `request body must not be compressed (Content-Encoding: ${coding}): send the file as it is`,
      {
        field: 'Content-Encoding',
        reason: 'only identity is accepted',
      },
    )
  }
  const tooLarge = () => new AppError('PAYLOAD_TOO_LARGE', `request body is larger than the limit of ${limit} bytes`, { limit })
  const declared = request.headers.get('content-length')
  if (declared !== null && Number(declared) > limit) throw tooLarge()
  const read = readForeignText(await readLimited(request.body, limit, tooLarge), syntax)
  if (!read.ok) throw new InvalidError(`request body is ${read.reason}`, 'body', read.reason)
  return read.value
}
