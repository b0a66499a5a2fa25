/**
 * Unleash's feature dependencies as prerequisites (docs/migrations.md#from-unleash): on a parent
 * being on → its `"true"`, on it being off → its `"false"`, on some of its variants → those
 * variants. Unleash looks one level deep only, so a parent that has parents of its own never holds.
 */

import type { Prerequisite } from '../prerequisite.ts'
import type { UnleashDependency, UnleashFeature } from './unleash-export.ts'
import type { TranslatedFeature } from './unleash-feature.ts'

const MAX = 10

/** The prerequisites of a feature's `dependencies`, or why they cannot be carried. */
export function dependencyPrerequisites(
  dependencies: readonly UnleashDependency[],
  translated: ReadonlyMap<string, TranslatedFeature>,
  names: ReadonlyMap<string, string>,
  features: ReadonlyMap<string, UnleashFeature>,
): { prerequisites: Prerequisite[] } | { reason: string } {
  if (dependencies.length > MAX) return { reason: `depends on ${dependencies.length} features; flagd takes at most ${MAX} prerequisites` }
  const prerequisites: Prerequisite[] = []
  for (const d of dependencies) {
    const parent = features.get(d.feature)
    if (parent === undefined) return { reason: `depends on ${d.feature}, which is not in the file` }
    const t = translated.get(d.feature)
    const flag = names.get(d.feature)
    if (t === undefined || flag === undefined) return { reason: `depends on ${d.feature}, which is skipped` }
    if (parent.dependencies.length > 0)
      return { reason: `depends on ${d.feature}, which has dependencies of its own: Unleash then never enables it` }
    if (d.enabled === false || !(d.variants !== undefined && d.variants.length > 0)) {
      if (t.variants !== undefined)
        return {
          reason: `depends on ${d.feature} being ${d.enabled === false ? 'off' : 'on'}, but ${d.feature} has variants, so its flag answers a variant, not on or off`,
        }
      prerequisites.push({ flag, variants: [d.enabled === false ? 'false' : 'true'] })
      continue
    }
    const values = t.variants?.values
    if (values === undefined) return { reason: `depends on variants of ${d.feature}, which has none` }
    const listed = d.variants.filter((v) => Object.hasOwn(values, v))
    if (listed.length === 0) return { reason: `depends on variants ${d.variants.join(', ')} of ${d.feature}, which it does not have` }
    const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b)
    const clash = Object.keys(values).find((v) => !listed.includes(v) && listed.some((l) => same(values[l], values[v])))
    if (clash !== undefined)
      return {
        reason: `depends on variants of ${d.feature}, one of which has the same value as its variant ${clash}, which flagd's prerequisites cannot tell apart`,
      }
    prerequisites.push({ flag, variants: listed })
  }
  return { prerequisites }
}
