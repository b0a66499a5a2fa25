/**
 * What the rule compiler's parts share: compiled expressions, the walk's state, and operator
 * arguments (flagd's convention: a single argument that is not a list stands for a list of one,
 * and one that evaluates to a list is that list).
 */

import type { FieldProblem } from '../errors.ts'
import type { RuleRun } from './rule-evaluation.ts'

/** A compiled expression: its value for the current data. */
export type Expr = (data: unknown, run: RuleRun) => unknown

/** What a rule may refer to. */
export interface RuleEnv {
  /** Segment rules by name (`{"$ref": name}`). */
  segments: ReadonlyMap<string, unknown>
  /** The flag's variant names; texts in result positions must be one. Absent for a segment. */
  variants?: ReadonlySet<string>
}

/** The compiler's state while walking one rule. */
export interface Walk {
  env: RuleEnv
  problems: FieldProblem[]
  /** Segments being expanded, outermost first (a repeat is a cycle). */
  refs: string[]
  /**
   * Segments compiled so far in this walk, with the problems found inside them: a segment referred
   * to many times (a chain of segments each using the one before twice) is compiled once.
   */
  compiledSegments: Map<string, { expr: Expr; problems: FieldProblem[]; references: number }>
  compile(node: unknown, path: string, result: boolean): Expr
}

/** An expression that is always `v`. */
export const constant =
  (v: unknown): Expr =>
  () =>
    v

/** Compiled arguments: each one, or one expression whose list is the arguments. */
export type Args = { list: Expr[] } | { spread: Expr }

/** Compiles an operator's arguments (a single non-list argument stands for a list of one). */
export function compileArgs(walk: Walk, node: unknown, path: string, result = false): Args {
  if (Array.isArray(node)) return { list: node.map((n, i) => walk.compile(n, `${path}[${i}]`, result)) }
  if (node !== null && typeof node === 'object') return { spread: walk.compile(node, path, false) }
  return { list: [constant(node)] }
}

/** Evaluates compiled arguments to their list. */
export function evaluateArgs(args: Args, data: unknown, run: RuleRun): unknown[] {
  if ('spread' in args) {
    const v = args.spread(data, run)
    return Array.isArray(v) ? v : [v]
  }
  const out = new Array(args.list.length)
  for (let i = 0; i < args.list.length; i++) out[i] = (args.list[i] as Expr)(data, run)
  return out
}
