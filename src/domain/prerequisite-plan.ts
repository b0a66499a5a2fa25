/**
 * A flag's prerequisites resolved once against the flags an environment serves
 * (docs/api.md#prerequisites, docs/performance.md#prerequisites-made-nearly-free): each required
 * flag found by name once, through every chain, so an evaluation follows references instead of
 * looking names up; what can be known without a context is known here: whether a prerequisite
 * whose required flags answer every context alike holds, and which of a ruled flag's variants
 * satisfy a prerequisite on it.
 */

import { evaluate, isFailure, unmetAnswer } from './evaluation.ts'
import { allVariants, type Flag, isEnabled } from './flag.ts'
import type { Prerequisite } from './prerequisite.ts'
import { valueHolds } from './prerequisite-evaluation.ts'
import { servedTargeting } from './rollout.ts'

/** One prerequisite of a flag, resolved. */
export interface Requirement {
  readonly prerequisite: Prerequisite
  /** The flag required, `undefined` when the environment serves none of that name (it never holds). */
  readonly node: RequiredFlag | undefined
  /**
   * Whether it holds, when that is the same for every context (the required flag and everything it
   * requires have no rule and no split); `undefined` when the context decides.
   */
  readonly decided: boolean | undefined
  /** The variants of the required flag whose value satisfies the prerequisite: what a rule choosing one answers. */
  readonly satisfiedBy: ReadonlySet<string>
}

/** A flag some chain of prerequisites requires. */
export interface RequiredFlag {
  readonly flag: Flag
  readonly enabled: boolean
  /** Whether it has a rule (its own or its rollout's) and is enabled, so its answer is the rule's. */
  readonly ruled: boolean
  /** Its own prerequisites; none while it is disabled (a disabled flag answers `DISABLED` whatever they answer). */
  readonly requires: readonly Requirement[]
  /** Its place among those more than one requirement leads to, which an evaluation answers once; `-1` for the others. */
  readonly slot: number
}

/** A flag's prerequisites resolved (see module comment). */
export interface PrerequisitePlan {
  readonly requires: readonly Requirement[]
  /** How many required flags more than one requirement leads to. */
  readonly slots: number
}

const ON_PATH = Symbol('on the path')

/** Whether a flag answers the same for every context, its prerequisites aside: no rule, no split. */
const contextFree = (flag: Flag): boolean =>
  !isEnabled(flag) || (servedTargeting(flag) === undefined && !(flag.type === 'AB-TEST' && !flag.valueExists))

/**
 * The prerequisites of `flag` resolved against `flags` (the environment's served flags by name). A
 * prerequisite that would close a cycle (refused on write, so only in a damaged store) reads as one
 * naming no flag.
 */
export function planPrerequisites(flag: Flag, flags: ReadonlyMap<string, Flag>): PrerequisitePlan {
  const nodes = new Map<string, { -readonly [K in keyof RequiredFlag]: RequiredFlag[K] } | typeof ON_PATH>([[flag.name, ON_PATH]])
  let slots = 0
  const requirement = (p: Prerequisite): Requirement => {
    const known = nodes.get(p.flag)
    let node: RequiredFlag | undefined
    if (known === ON_PATH) node = undefined
    else if (known !== undefined) {
      if (known.slot < 0) known.slot = slots++
      node = known
    } else {
      const required = flags.get(p.flag)
      if (required !== undefined) {
        nodes.set(p.flag, ON_PATH)
        const enabled = isEnabled(required)
        const requires = enabled ? (required.prerequisites ?? []).map(requirement) : []
        const made = { flag: required, enabled, ruled: enabled && servedTargeting(required) !== undefined, requires, slot: -1 }
        nodes.set(p.flag, made)
        node = made
      }
    }
    return { prerequisite: p, node, decided: decidedOf(p, node), satisfiedBy: satisfying(p, node) }
  }
  const requires = (flag.prerequisites ?? []).map(requirement)
  return { requires, slots }
}

/** Whether `p` holds whatever the context, or `undefined` when the context decides. */
function decidedOf(p: Prerequisite, node: RequiredFlag | undefined): boolean | undefined {
  if (node === undefined) return false
  if (!node.enabled) return false // a disabled flag answers no value
  if (!contextFree(node.flag) || node.requires.some((r) => r.decided === undefined)) return undefined
  // what it answers for any context: as usual while its own prerequisites hold, else its default
  const held = node.requires.every((r) => r.decided === true)
  const answer = held ? evaluate(node.flag, {}, undefined, { timestamp: 0 }) : unmetAnswer(node.flag, {})
  return !isFailure(answer) && answer.value !== undefined && valueHolds(p, node.flag, answer.value)
}

/** The variants of the required flag whose value satisfies `p` (none while it has no rule). */
function satisfying(p: Prerequisite, node: RequiredFlag | undefined): ReadonlySet<string> {
  if (node === undefined || !node.ruled) return NONE
  const variants = allVariants(node.flag)
  return new Set(Object.keys(variants).filter((name) => valueHolds(p, node.flag, variants[name])))
}

const NONE: ReadonlySet<string> = new Set()
