/**
 * The operators that decide what to evaluate: `if` (and its alias `?:`), `and`, `or`, the list
 * operators whose second argument runs once per item (`map`, `filter`, `reduce`, `all`, `none`,
 * `some`), and flagd's `fractional`. Each item visited counts against the evaluation's budget, so
 * no list in a context, however long, can keep the service from answering others. `if` conditions,
 * segments and `fractional` buckets are recorded in the trace when one is asked for.
 */

import { type Args, compileArgs, constant, type Expr, evaluateArgs, type Walk } from './compiled-expr.ts'
import { bucketTable, pickBucket, pickFromTable, weighsNothing } from './fractional.ts'
import { RuleFault, truthy } from './json-logic-values.ts'
import { argumentsCost, built, type RuleRun, spend } from './rule-evaluation.ts'
import { ownValue } from './rule-operators.ts'

/** The operators compiled here. */
export const STRUCTURAL_OPERATORS: readonly string[] = [
  'if',
  '?:',
  'and',
  'or',
  'map',
  'filter',
  'reduce',
  'all',
  'none',
  'some',
  'fractional',
]

function listOf(walk: Walk, op: string, node: unknown, path: string): unknown[] | undefined {
  if (Array.isArray(node)) return node
  walk.problems.push({ field: path, reason: `${op} takes a list of arguments` })
  return undefined
}

function compileIf(walk: Walk, node: unknown[], path: string, result: boolean): Expr {
  if (node.length === 0) return constant(null)
  if (node.length === 1) return walk.compile(node[0], `${path}[0]`, result)
  const parts = node.length % 2 === 1 ? node : [...node, null]
  const tests: Expr[] = []
  const branches: Expr[] = []
  const places: string[] = []
  for (let i = 0; i + 1 < parts.length; i += 2) {
    tests.push(walk.compile(parts[i], `${path}[${i}]`, false))
    branches.push(walk.compile(parts[i + 1], `${path}[${i + 1}]`, result))
    places.push(`${path}[${i}]`)
  }
  const otherwise = walk.compile(parts[parts.length - 1], `${path}[${parts.length - 1}]`, result)
  return (data, run) => {
    spend(run, 1)
    for (let i = 0; i < tests.length; i++) {
      const passed = truthy((tests[i] as Expr)(data, run))
      run.trace?.push({ kind: 'condition', path: places[i] as string, rule: parts[i * 2], result: passed })
      if (passed) return (branches[i] as Expr)(data, run)
    }
    return otherwise(data, run)
  }
}

function compileLogic(walk: Walk, node: unknown[], path: string, and: boolean): Expr {
  const items = node.map((n, i) => walk.compile(n, `${path}[${i}]`, false))
  return (data, run) => {
    spend(run, 1)
    let item: unknown = null
    for (const expr of items) {
      item = expr(data, run)
      if (truthy(item) !== and) return item
    }
    return item
  }
}

/** The list a list operator walks: its first argument's value, `[]` when empty; else a fault. */
function itemsOf(v: unknown, op: string, run: RuleRun): unknown[] {
  const list = v || []
  if (!Array.isArray(list)) throw new RuleFault(`${op} needs a list`)
  spend(run, list.length)
  return list
}

function compileIteration(walk: Walk, op: string, node: unknown[], path: string): Expr {
  const source = walk.compile(node[0], `${path}[0]`, false)
  const step = walk.compile(node[1], `${path}[1]`, false)
  if (op === 'reduce') {
    const initial = node.length >= 3 ? walk.compile(node[2], `${path}[2]`, false) : undefined
    return (data, run) => {
      const list = itemsOf(source(data, run), op, run)
      if (!initial && list.length === 0) throw new RuleFault('reduce of an empty list needs an initial value')
      let acc = initial ? initial(data, run) : list[0]
      for (let i = initial ? 0 : 1; i < list.length; i++) acc = step({ accumulator: acc, current: list[i] }, run)
      return acc
    }
  }
  return (data, run) => {
    const list = itemsOf(source(data, run), op, run)
    switch (op) {
      case 'map':
        return built(
          run,
          list.map((item) => step(item, run)),
        )
      case 'filter':
        return built(
          run,
          list.filter((item) => truthy(step(item, run))),
        )
      case 'all':
        return list.length > 0 && list.every((item) => truthy(step(item, run)))
      case 'some':
        return list.some((item) => truthy(step(item, run)))
      default: // none
        return !list.some((item) => truthy(step(item, run)))
    }
  }
}

/**
 * Write-time checks of literal buckets: `[variant, weight?]`, weights non-negative integers, and not
 * all of them 0 (such a split weighs nothing and would silently serve the default to everyone).
 */
function checkBuckets(walk: Walk, node: unknown[], path: string): void {
  if (weighsNothing(node))
    walk.problems.push({ field: path, reason: 'every weight of this split is 0: give at least one bucket a weight above 0' })
  node.forEach((bucket, i) => {
    if (i === 0 && !Array.isArray(bucket)) return // the bucket key (a text seed or an expression)
    if (!Array.isArray(bucket)) {
      if (bucket === null || typeof bucket !== 'object')
        walk.problems.push({ field: `${path}[${i}]`, reason: 'a bucket is [variant, weight]' })
      return
    }
    if (bucket.length === 0 || bucket.length > 2)
      walk.problems.push({ field: `${path}[${i}]`, reason: 'a bucket is [variant] or [variant, weight]' })
    const weight = bucket[1]
    if (bucket.length === 2 && (weight === null || typeof weight !== 'object') && !(Number.isInteger(weight) && (weight as number) >= 0))
      walk.problems.push({ field: `${path}[${i}][1]`, reason: 'a fractional weight is a non-negative integer' })
  })
}

function compileFractional(walk: Walk, node: unknown, path: string, result: boolean): Expr {
  if (Array.isArray(node)) checkBuckets(walk, node, path)
  // bucket variants sit in result positions; the key and the weights do not
  let args: Args
  if (Array.isArray(node)) {
    args = {
      list: node.map((n, i) => {
        const at = `${path}[${i}]`
        if (!Array.isArray(n)) return walk.compile(n, at, false)
        const parts = n.map((p, j) => walk.compile(p, `${at}[${j}]`, j === 0 && result))
        return n.every((p) => p === null || typeof p !== 'object')
          ? constant(n)
          : (data: unknown, run: RuleRun) => parts.map((p) => p(data, run))
      }),
    }
  } else args = compileArgs(walk, node, path)
  const general: Expr = (data, run) => {
    const values = evaluateArgs(args, data, run)
    // picking walks every bucket: charged like any operator's arguments
    spend(run, argumentsCost(values))
    let key: string
    let buckets: unknown[]
    if (typeof values[0] === 'string') {
      key = values[0]
      buckets = values.slice(1)
    } else {
      // flagd's default key: the flag key followed by the targeting key
      const flagd = data === run.root ? undefined : ownValue(data, '$flagd')
      const targetingKey = ownValue(data, 'targetingKey')
      if ((data !== run.root && !flagd) || !targetingKey) {
        run.trace?.push({ kind: 'fractional-skipped', path, reason: 'no targetingKey to split by' })
        return null
      }
      const flagKey = data === run.root ? run.flagKey : ownValue(flagd, 'flagKey')
      key = `${String(flagKey)}${String(targetingKey)}`
      buckets = values
    }
    const picked = values.length === 0 ? undefined : pickBucket(key, buckets)
    if (!picked) {
      run.trace?.push({ kind: 'fractional-skipped', path, reason: 'the buckets are malformed or weigh nothing' })
      return null
    }
    run.trace?.push({ kind: 'fractional', path, bucketKey: key, bucket: picked.value, total: picked.total, variant: picked.variant })
    return picked.variant
  }
  return fixedSplit(node, args, path, general) ?? general
}

/**
 * A split whose buckets are all literal (a rollout's hundred, say) checked and summed once, at
 * compile time: each run hashes the key and finds its bucket by halving. It answers, traces and
 * charges exactly as the general form; a bucket key that is not a text goes to that form.
 */
function fixedSplit(node: unknown, args: Args, path: string, general: Expr): Expr | undefined {
  if (!Array.isArray(node) || !('list' in args) || node.length === 0) return undefined
  const keyed = !Array.isArray(node[0])
  const buckets = keyed ? node.slice(1) : node
  if (!buckets.every((b) => Array.isArray(b) && b.every((p: unknown) => p === null || typeof p !== 'object'))) return undefined
  const table = bucketTable(buckets)
  if (table === undefined || table.total === 0) return undefined
  const keyExpr = keyed ? (args.list[0] as Expr) : undefined
  const bucketsCost = argumentsCost(buckets)
  return (data, run) => {
    let key: string
    if (keyExpr !== undefined) {
      const value = keyExpr(data, run)
      if (typeof value !== 'string') return general(data, run)
      spend(run, bucketsCost + argumentsCost([value]) - 1)
      key = value
    } else {
      spend(run, bucketsCost)
      const flagd = data === run.root ? undefined : ownValue(data, '$flagd')
      const targetingKey = ownValue(data, 'targetingKey')
      if ((data !== run.root && !flagd) || !targetingKey) {
        run.trace?.push({ kind: 'fractional-skipped', path, reason: 'no targetingKey to split by' })
        return null
      }
      key = `${String(data === run.root ? run.flagKey : ownValue(flagd, 'flagKey'))}${String(targetingKey)}`
    }
    const picked = pickFromTable(table, key) as { variant: unknown; value: number; total: number }
    run.trace?.push({ kind: 'fractional', path, bucketKey: key, bucket: picked.value, total: picked.total, variant: picked.variant })
    return picked.variant
  }
}

/** Compiles one of {@link STRUCTURAL_OPERATORS}. */
export function compileStructural(walk: Walk, op: string, node: unknown, path: string, result: boolean): Expr {
  if (op === 'fractional') return compileFractional(walk, node, path, result)
  const list = listOf(walk, op, node, path)
  if (!list) return constant(null)
  switch (op) {
    case 'if':
    case '?:':
      return compileIf(walk, list, path, result)
    case 'and':
    case 'or':
      return compileLogic(walk, list, path, op === 'and')
    default:
      if (list.length < 2) walk.problems.push({ field: path, reason: `${op} takes [list, operation${op === 'reduce' ? ', initial' : ''}]` })
      return compileIteration(walk, op, list, path)
  }
}
