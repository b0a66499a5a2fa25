/** What an empty Flags page says (src/ui/app/empty-list-words.ts), without a browser. */

import { expect, test } from 'bun:test'
import { emptyListWords, type ListNarrowing } from '../../src/ui/app/empty-list-words.ts'

/** The filters an address names, as the Flags page reads them (flag-filters.tsx's filtersOf). */
function filtersOf(search: string): ListNarrowing {
  const p = new URLSearchParams(search)
  return {
    type: p.get('type') ?? '',
    state: p.get('state') ?? '',
    rules: p.get('rules') === 'true',
    rolling: p.get('rolling') === 'true',
    pending: p.get('pending') === 'true',
    review: p.get('review') === 'true',
    changed: p.get('changed') === '24h',
    life: { kind: p.get('kind') ?? '', owner: p.get('owner') ?? '', tags: p.get('tags') ?? '' },
  }
}

const empty = (search: string, query = '') => {
  const filters = filtersOf(search)
  const searching = query !== '' || search !== ''
  return emptyListWords(filters, query, searching)
}

test('no filter and no search: there are no flags yet', () => {
  expect(empty('')).toBe('No flags yet.')
})

test('the Stale filter alone says what stale means, and that nothing is', () => {
  const words = empty('state=stale')
  expect(words).toStartWith('No flag is stale.')
  expect(words).toContain('evaluated')
  expect(words).toContain('usage.staleDays')
})

test("each counter's filter alone answers in its own words", () => {
  expect(empty('state=old')).toContain('potentially stale')
  expect(empty('review=true')).toStartWith('Nothing needs your review')
  expect(empty('rolling=true')).toBe('No rollout runs in this environment.')
  expect(empty('changed=24h')).toBe('No flag has changed in the last 24 hours.')
})

test('a search, several filters, or another filter: nothing matches', () => {
  expect(empty('state=stale', 'checkout')).toBe('No flags match.')
  expect(empty('state=stale&rolling=true')).toBe('No flags match.')
  expect(empty('type=BOOLEAN')).toBe('No flags match.')
  expect(empty('', 'checkout')).toBe('No flags match.')
  expect(empty('state=enabled')).toBe('No flags match.')
})
