/**
 * docs/openfeature.md#in-process: the credential of a sync request, and the bound on its selector. Refusals
 * are application errors; the one table maps INVALID_REQUEST to gRPC's INVALID_ARGUMENT.
 */

import { afterEach, expect, spyOn, test } from 'bun:test'
import { MAX_SELECTOR_LENGTH, secretOf } from '../../src/sync/secret-of.ts'

const noMetadata = (headers: Record<string, string> = {}) => ({
  get: (key: string) => (headers[key] === undefined ? [] : [headers[key] as string]),
})
const request = (selector: string) => ({ providerId: '', selector })

afterEach(() => {
  ;(String.prototype.split as unknown as { mockRestore?: () => void }).mockRestore?.()
})

test('a selector longer than the bound is refused first, before it is split or a token is looked at', () => {
  const split = spyOn(String.prototype, 'split')
  for (const selector of [','.repeat(4 * 2 ** 20), `token=${'x'.repeat(MAX_SELECTOR_LENGTH)}`]) {
    for (const [headers, body] of [
      [{}, selector],
      [{ 'flagd-selector': selector }, ''],
    ] as const) {
      expect(() => secretOf(noMetadata(headers), request(body))).toThrow(
        expect.objectContaining({ code: 'INVALID_REQUEST', message: `the selector is at most ${MAX_SELECTOR_LENGTH} characters` }),
      )
    }
  }
  expect(split).not.toHaveBeenCalled()
})

test('a selector within the bound still carries a token', () => {
  expect(secretOf(noMetadata(), request('token=flagd_abc'))).toBe('flagd_abc')
  expect(secretOf(noMetadata(), request(''))).toBeUndefined()
  expect(() => secretOf(noMetadata(), request('source=x'))).toThrow(expect.objectContaining({ code: 'INVALID_REQUEST' }))
})
