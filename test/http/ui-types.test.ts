/** The web UI's API client is typed from the OpenAPI document as it is: the committed types are current. */

import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { API_TYPES_PATH, apiTypesText } from '../../scripts/write-api-types.ts'

test('src/ui/app/api-types.ts matches the served document (run `bun run ui:types` after changing the API)', async () => {
  expect(readFileSync(API_TYPES_PATH, 'utf8') === (await apiTypesText())).toBe(true)
}, 30_000)
