/** The web UI's flag tree (src/ui/app/flag-tree.ts): nesting, order and counts, without a browser. */

import { expect, test } from 'bun:test'
import { type FlagGroup, flagTree } from '../../src/ui/app/flag-tree.ts'

const flags = (...names: string[]) => names.map((name) => ({ name }))

/** The tree as indented lines: `name/ (total)` for groups, `name` for flags. */
function outline(group: FlagGroup<{ name: string }>, depth = 0): string[] {
  const pad = '  '.repeat(depth)
  return [
    ...group.groups.flatMap((g) => [`${pad}${g.name}/ (${g.total})`, ...outline(g, depth + 1)]),
    ...group.flags.map((f) => `${pad}${f.name}`),
  ]
}

test('groups nest by "/", subgroups before flags, both in code-point order, totals count everything below', () => {
  const tree = flagTree(flags('top', 'shop/retries', 'shop/checkout/new_flow', 'Shop/x', 'a/b/c/d', 'shop/checkout/banner', 'shop/a_first'))
  expect(outline(tree)).toEqual([
    'Shop/ (1)',
    '  Shop/x',
    'a/ (1)',
    '  b/ (1)',
    '    c/ (1)',
    '      a/b/c/d',
    'shop/ (4)',
    '  checkout/ (2)',
    '    shop/checkout/banner',
    '    shop/checkout/new_flow',
    '  shop/a_first',
    '  shop/retries',
    'top',
  ])
  expect(tree.total).toBe(7)
  const checkout = tree.groups.find((g) => g.name === 'shop')?.groups[0]
  expect(checkout).toMatchObject({ path: 'shop/checkout', name: 'checkout', total: 2 })
})

test('a group with no flags of its own exists only through its subgroups; no flags, no groups', () => {
  expect(flagTree([])).toEqual({ path: '', name: '', groups: [], flags: [], total: 0 })
  const tree = flagTree(flags('a/b/c'))
  expect(tree.groups.map((g) => [g.path, g.flags.length, g.total])).toEqual([['a', 0, 1]])
})
