/** The web UI's API client is typed from the OpenAPI document as it is: the committed types are current. */

import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { API_TYPES_PATH, apiTypesText } from '../../scripts/write-api-types.ts'

/** The first lines where two texts differ, as a unified-looking excerpt (committed `-`, generated `+`). */
function firstDifferences(committed: string, generated: string, context = 3, most = 40): string {
  const a = committed.split('\n')
  const b = generated.split('\n')
  let start = 0
  while (start < a.length && start < b.length && a[start] === b[start]) start++
  let endA = a.length - 1
  let endB = b.length - 1
  while (endA >= start && endB >= start && a[endA] === b[endB]) {
    endA--
    endB--
  }
  const from = Math.max(0, start - context)
  const lines = [`@@ line ${start + 1} @@`]
  for (let i = from; i < start; i++) lines.push(`  ${a[i]}`)
  for (let i = start; i <= endA; i++) lines.push(`- ${a[i]}`)
  for (let i = start; i <= endB; i++) lines.push(`+ ${b[i]}`)
  return lines.slice(0, most).join('\n')
}

test('src/ui/app/generated/api-types.ts matches the served document (run `bun run ui:types` after changing the API)', async () => {
  const committed = readFileSync(API_TYPES_PATH, 'utf8')
  const generated = await apiTypesText()
  // the difference itself, not "expected true", so the failure says what moved
  expect(committed === generated ? '' : firstDifferences(committed, generated)).toBe('')
}, 30_000)
