/**
 * The flag list as a tree of `/` groups, as a person browses a folder: each group holds its
 * subgroups (first) and its own flags, both in code-point order, and knows how many flags lie
 * beneath it. Pure data, so it is tested without a browser.
 */

/** One `/` group: `path` is its full name (`shop/checkout`), `name` its last segment (`checkout`). */
export interface FlagGroup<F> {
  path: string
  name: string
  groups: FlagGroup<F>[]
  flags: F[]
  /** Flags in this group and every group below it. */
  total: number
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0) // names are ASCII: UTF-16 order is code-point order

/** The tree of `flags` (the root has path and name `''`). */
export function flagTree<F extends { name: string }>(flags: readonly F[]): FlagGroup<F> {
  const root: FlagGroup<F> = { path: '', name: '', groups: [], flags: [], total: 0 }
  const groups = new Map<string, FlagGroup<F>>([['', root]])
  const groupAt = (path: string): FlagGroup<F> => {
    let group = groups.get(path)
    if (group === undefined) {
      const cut = path.lastIndexOf('/')
      group = { path, name: path.slice(cut + 1), groups: [], flags: [], total: 0 }
      groups.set(path, group)
      groupAt(cut === -1 ? '' : path.slice(0, cut)).groups.push(group)
    }
    return group
  }
  for (const flag of flags) {
    const cut = flag.name.lastIndexOf('/')
    groupAt(cut === -1 ? '' : flag.name.slice(0, cut)).flags.push(flag)
  }
  for (const group of groups.values()) {
    group.groups.sort((a, b) => byCodePoint(a.name, b.name))
    group.flags.sort((a, b) => byCodePoint(a.name, b.name))
  }
  countFlags(root)
  return root
}

/** Sets each group's `total` from its own flags and its subgroups' totals; answers the root's. */
function countFlags<F>(group: FlagGroup<F>): number {
  group.total = group.flags.length
  for (const sub of group.groups) group.total += countFlags(sub)
  return group.total
}
