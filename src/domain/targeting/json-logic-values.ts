/**
 * The value semantics of flagd's JsonLogic (as OpenFeature's evaluators run it): truthiness, the
 * loose comparisons, arithmetic and the string and array operators, over already evaluated
 * arguments. Where flagd's evaluator fails (a number compared with a word, arithmetic on an
 * object), these throw a `RuleFault`, which makes the evaluation an error (`GENERAL`).
 */

/** A failure while evaluating a rule: the evaluation answers an error, never a guess. */
export class RuleFault extends Error {}

const fault = (message: string): never => {
  throw new RuleFault(message)
}

/** JsonLogic truthiness: `[]` and `{}` are false, as are `0`, `""`, `null` and `false`. */
export function truthy(v: unknown): boolean {
  if (!v) return false
  if (typeof v !== 'object') return true
  if (Array.isArray(v)) return v.length > 0
  for (const _ in v) return true
  return false
}

/** Throws unless `v` reads as a number (objects and words do not). */
function numeric(v: unknown): void {
  if (typeof v === 'number' && Number.isNaN(v)) fault('a comparison met NaN')
  if (v && typeof v === 'object') fault('a comparison met an object or a list')
}

/** The comparison operators. */
export type Comparison = '==' | '===' | '!=' | '!==' | '<' | '<=' | '>' | '>='

function apply(op: Comparison, a: unknown, b: unknown): boolean {
  // biome-ignore-start lint/suspicious/noDoubleEquals: JsonLogic's == and != are JavaScript's loose ones
  switch (op) {
    case '==':
      return a == b
    case '!=':
      return a != b
    case '===':
      return a === b
    case '!==':
      return a !== b
    case '<':
      return (a as number) < (b as number)
    case '<=':
      return (a as number) <= (b as number)
    case '>':
      return (a as number) > (b as number)
    case '>=':
      return (a as number) >= (b as number)
  }
  // biome-ignore-end lint/suspicious/noDoubleEquals: see above
}

/**
 * The right operand of a loose comparison after flagd's checks: two texts (or nulls) compare as
 * they are; otherwise both must read as numbers (else a fault), and `null` meets a falsy value as
 * JavaScript's `==` would not (so `null == 0` holds, as in flagd).
 */
function checked(b: unknown, a: unknown): unknown {
  if ((typeof b === 'string' || b === null) && (typeof a === 'string' || a === null)) return b
  numeric(b)
  if (Number.isNaN(Number(b)) && a !== null) fault(`${JSON.stringify(b)} is not a number`)
  numeric(a)
  if (Number.isNaN(Number(a))) fault(`${JSON.stringify(a)} is not a number`)
  if (a === null && !b) return null
  if (b === null && !a) return 0
  return b
}

/** One comparison of two operands. */
export function compare(op: Comparison, a: unknown, b: unknown): boolean {
  if (op === '===' || op === '!==') return apply(op, a, b)
  return apply(op, a, checked(b, a))
}

const isObject = (v: unknown) => v !== null && typeof v === 'object'

/** `+` over its arguments: their sum, each read as a number. */
export function plus(args: readonly unknown[]): number {
  let sum = 0
  for (const v of args) {
    if (isObject(v)) fault('+ met an object or a list')
    sum += Number(v)
  }
  if (Number.isNaN(sum)) fault('+ gave NaN')
  return sum
}

/** `*` over its arguments. */
export function times(args: readonly unknown[]): number {
  let product = 1
  for (const v of args) {
    if (isObject(v)) fault('* met an object or a list')
    product *= Number(v)
  }
  if (Number.isNaN(product)) fault('* gave NaN')
  return product
}

/** `-`: negation of one argument, or the first minus the others. */
export function minus(args: readonly unknown[]): number {
  if (isObject(args[0])) fault('- met an object or a list')
  if (args.length === 0) fault('- needs an argument')
  if (args.length === 1) return -(args[0] as number)
  let out = Number(args[0])
  for (let i = 1; i < args.length; i++) {
    if (isObject(args[i])) fault('- met an object or a list')
    out -= Number(args[i])
  }
  if (Number.isNaN(out)) fault('- gave NaN')
  return out
}

/** `/`: the first divided by the others (by zero is a fault). */
export function divide(args: readonly unknown[]): number {
  if (isObject(args[0])) fault('/ met an object or a list')
  if (args.length === 0) fault('/ needs an argument')
  if (args.length === 1) {
    if (!Number(args[0])) fault('/ by zero')
    return 1 / Number(args[0])
  }
  let out = Number(args[0])
  for (let i = 1; i < args.length; i++) {
    if (isObject(args[i]) || !args[i]) fault('/ by zero or by an object')
    out /= Number(args[i])
  }
  if (Number.isNaN(out) || out === Number.POSITIVE_INFINITY) fault('/ gave no finite number')
  return out
}

/** `%`: the first modulo the others. */
export function modulo(args: readonly unknown[]): number {
  if (isObject(args[0])) fault('% met an object or a list')
  if (args.length < 2) fault('% needs two arguments')
  let out = Number(args[0])
  for (let i = 1; i < args.length; i++) {
    if (isObject(args[i])) fault('% met an object or a list')
    out %= Number(args[i])
  }
  if (Number.isNaN(out)) fault('% gave NaN')
  return out
}

/** `max` / `min`: numbers only. */
export function extreme(args: readonly unknown[], max: boolean): number {
  if (args.length === 0 || typeof args[0] !== 'number') fault(`${max ? 'max' : 'min'} takes numbers only`)
  let out = args[0] as number
  for (const v of args) {
    if (typeof v !== 'number') return fault(`${max ? 'max' : 'min'} takes numbers only`)
    if (max ? v > out : v < out) out = v
  }
  return out
}

/** `in`: membership in a list, or a substring of a text. */
export function within(item: unknown, container: unknown): boolean {
  if (!container) return false // an empty text too, as in flagd's evaluator
  if (Array.isArray(container)) return container.includes(item)
  if (typeof container === 'string') return container.includes(String(item))
  return fault('in needs a list or a text')
}

/**
 * `cat`: the arguments as one text. A `null` reads "null", as in flagd-core's rules at the top level
 * (where `fractional` bucket keys are built), so a split by `cat` agrees with OpenFeature's
 * in-process evaluator; give `var` a default to choose what a missing key reads as.
 */
export function concat(args: readonly unknown[]): string {
  let out = ''
  for (const v of args) out += String(v)
  return out
}

/** `substr`: JavaScript's `substr`, a negative length counting from the end. */
export function substring(args: readonly unknown[]): string {
  const [text, from, length] = args
  if (typeof text !== 'string') return fault('substr needs a text')
  if (typeof length === 'number' && length < 0) {
    const rest = text.substr(from as number)
    return rest.substr(0, rest.length + length)
  }
  return text.substr(from as number, length as number)
}

/** `merge`: the arguments with lists flattened one level. */
export function merge(args: readonly unknown[]): unknown[] {
  const out: unknown[] = []
  for (const v of args) {
    if (Array.isArray(v)) for (const x of v) out.push(x)
    else out.push(v)
  }
  return out
}

/** `starts_with` / `ends_with`: two texts, else `null`. */
export function affix(args: readonly unknown[], start: boolean): boolean | null {
  if (args.length !== 2 || typeof args[0] !== 'string' || typeof args[1] !== 'string') return null
  return start ? args[0].startsWith(args[1]) : args[0].endsWith(args[1])
}
