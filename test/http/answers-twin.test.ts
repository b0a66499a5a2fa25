/**
 * The prebuilt headers of the hot answers (answers.ts, kept per ETag) against their plain twin, the
 * headers built anew for each answer: over random sequences of answers whose ETags carry different
 * scopes and environments (as bulk ETags do), every answer has exactly the headers the twin gives,
 * read after the whole sequence was made, so no later answer's id or ETag reaches an earlier one.
 */

import { expect, test } from 'bun:test'
import fc from 'fast-check'
import { notModifiedAnswer, taggedAnswer } from '../../src/http/answers.ts'
import { JSON_TYPE } from '../../src/http/error-handler.ts'

// revisions, environments and scope digests, as evaluation-service.ts writes them
const etags = fc.constantFrom('"3"', '"3-abc"', '"3-abd"', '"e4.2.x1-abc"', '"e4.2.x1-abc@17"', '"4"', '"flagd-staging-3-1"')

/** The plain twin: the headers an answer must carry, built for this answer alone. */
const twin = (kind: 'tagged' | 'unchanged', id: string, etag: string): Record<string, string> =>
  kind === 'tagged'
    ? { 'cache-control': 'no-store', 'content-type': JSON_TYPE, etag, 'x-content-type-options': 'nosniff', 'x-request-id': id }
    : { 'cache-control': 'no-store', etag, 'x-content-type-options': 'nosniff', 'x-request-id': id }

test('every answer carries the headers its plain twin builds, whatever was answered before or after it', () => {
  fc.assert(
    fc.property(fc.array(fc.tuple(fc.constantFrom('tagged' as const, 'unchanged' as const), etags), { maxLength: 30 }), (asked) => {
      const made = asked.map(([kind, etag], i) => {
        const id = `req-${i}`
        const answer = kind === 'tagged' ? taggedAnswer(id, '{}', etag) : notModifiedAnswer(id, etag)
        return { answer, want: twin(kind, id, etag) }
      })
      for (const { answer, want } of made) expect(Object.fromEntries(answer.headers.entries())).toEqual(want)
    }),
    { numRuns: 200 },
  )
})
