import { expect, test } from 'bun:test'
import {
  lifecycleBody,
  lifecycleDraftOf,
  listFilterOf,
  prerequisitesBody,
  prerequisitesOf,
  staleTitle,
  tagsOf,
  variantsInWords,
  withVariant,
} from '../../src/ui/app/lifecycle-words.ts'

test('tags typed in one field: split at commas and spaces, each once, in the order typed', () => {
  expect(tagsOf(' web, q4  team:checkout,web ')).toEqual(['web', 'q4', 'team:checkout'])
  expect(tagsOf('')).toEqual([])
  expect(tagsOf(' , ')).toEqual([])
})

test("the stale mark's title says why: older than the kind's lifetime, and when the flag was created", () => {
  expect(staleTitle('operational', 'Dec 1, 2026')).toBe(
    "Older than its kind's lifetime: an operational flag is expected to live 7 days unless configured otherwise (lifecycle.operationalDays); this one was created Dec 1, 2026",
  )
  expect(staleTitle('kill-switch', 'Dec 1, 2026')).toContain('lifecycle.killSwitchDays')
  expect(staleTitle('nonsense', 'x')).toContain('a release flag is expected to live 40 days')
})

test('variants in words: one, two, several', () => {
  expect(variantsInWords(['on'])).toBe('on')
  expect(variantsInWords(['a', 'b'])).toBe('a or b')
  expect(variantsInWords(['a', 'b', 'c'])).toBe('a, b or c')
  expect(variantsInWords([])).toBe('nothing')
})

test('prerequisites read from a flag, malformed entries left out', () => {
  expect(prerequisitesOf({})).toEqual([])
  expect(prerequisitesOf({ prerequisites: null })).toEqual([])
  expect(prerequisitesOf({ prerequisites: [{ flag: 'a', variants: ['on', 3] }, { flag: 1 }, null] })).toEqual([
    { flag: 'a', variants: ['on'] },
  ])
})

test('the prerequisites sent: rows without a flag left out, none at all sent as []', () => {
  expect(
    prerequisitesBody([
      { flag: 'a', variants: ['on'] },
      { flag: '', variants: ['x'] },
    ]),
  ).toEqual([{ flag: 'a', variants: ['on'] }])
  expect(prerequisitesBody([])).toEqual([])
  // a row with no variant ticked is sent: the service says what is wrong with it
  expect(prerequisitesBody([{ flag: 'a', variants: [] }])).toEqual([{ flag: 'a', variants: [] }])
})

test("ticking a variant keeps the flag's order of variants; clearing one removes it", () => {
  const all = ['on', 'off', 'beta']
  expect(withVariant(['beta'], 'on', true, all)).toEqual(['on', 'beta'])
  expect(withVariant(['on', 'beta'], 'on', false, all)).toEqual(['beta'])
  expect(withVariant(['gone'], 'off', true, all)).toEqual(['off', 'gone'])
})

test("the list's filter: only what is given, tags every one, in the live or archived view", () => {
  expect(listFilterOf({ kind: '', owner: '', tags: '' }, false)).toEqual({ archived: false })
  expect(listFilterOf({ kind: 'experiment', owner: 'team-a', tags: 'web q4' }, true)).toEqual({
    archived: true,
    kind: 'experiment',
    owner: 'team-a',
    tags: ['web', 'q4'],
  })
})

test("a flag's kind, owner and tags in the form and back: an empty owner removes it", () => {
  const d = lifecycleDraftOf({ kind: 'experiment', owner: 'team-a', tags: ['web', 'q4'] })
  expect(d).toEqual({ kind: 'experiment', owner: 'team-a', tags: 'web q4' })
  expect(lifecycleBody(d)).toEqual({ kind: 'experiment', owner: 'team-a', tags: ['web', 'q4'] })
  expect(lifecycleDraftOf({})).toEqual({ kind: 'release', owner: '', tags: '' })
  expect(lifecycleBody({ kind: 'release', owner: '  ', tags: '' })).toEqual({ kind: 'release', owner: null, tags: [] })
})
