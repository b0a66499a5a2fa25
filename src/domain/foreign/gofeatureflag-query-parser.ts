/**
 * GO Feature Flag's query language (the grammar of nikunjy/rules, docs/migrations.md#from-go-feature-flag)
 * read into a tree: comparisons `attr op value` (`eq ne lt gt le ge co sw ew in`, upper or lower
 * case, and `==`, `!=`, `<`, `>`, `<=`, `>=`), `attr pr`, `and`/`or` (one precedence, from the left,
 * as the tool's grammar has them), `not (…)` and parentheses. Values are text in double quotes (kept
 * as written between them, as the tool does), integers, decimals, `x.y.z` versions, `true`,
 * `false`, `null` and lists `[…]` of one kind. Errors name the position (1-based).
 */

/** The value of a comparison. */
export type QueryValue =
  | { kind: 'string'; value: string }
  | { kind: 'int'; value: number }
  | { kind: 'double'; value: number }
  | { kind: 'version'; value: string }
  | { kind: 'bool'; value: boolean }
  | { kind: 'null' }
  | { kind: 'strings'; value: string[] }
  | { kind: 'ints'; value: number[] }
  | { kind: 'doubles'; value: number[] }

/** A comparison operator, by its word form in lower case. */
export type QueryOp = 'eq' | 'ne' | 'lt' | 'gt' | 'le' | 'ge' | 'co' | 'sw' | 'ew' | 'in'

/** A parsed query. */
export type QueryNode =
  | { kind: 'logical'; op: 'and' | 'or'; left: QueryNode; right: QueryNode }
  | { kind: 'not'; query: QueryNode }
  | { kind: 'present'; path: string[] }
  | { kind: 'compare'; path: string[]; op: QueryOp; value: QueryValue }

const WORDS: QueryOp[] = ['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'co', 'sw', 'ew', 'in']
const SYMBOLS: Record<string, QueryOp> = { '==': 'eq', '!=': 'ne', '>': 'gt', '<': 'lt', '>=': 'ge', '<=': 'le' }
/** Each way an operator is written (all lower or all upper case, or its symbol) → the operator. */
const OPS: Record<string, QueryOp> = {
  ...Object.fromEntries(
    WORDS.flatMap((op) => [
      [op, op],
      [op.toUpperCase(), op],
    ]),
  ),
  ...SYMBOLS,
}
const NAME = /[A-Za-z][-_:A-Za-z0-9]*/uy
const NUMBER = /-?(0|[1-9][0-9]*)(\.[0-9]+)?([Ee][+-]?(0|[1-9][0-9]*))?/uy
const VERSION = /(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)/uy
const OPERATOR = /==|!=|<=|>=|<|>|[A-Za-z]+/uy
const LIST_NUMBER = /(0|[1-9][0-9]*)(\.[0-9]+([Ee][+-]?(0|[1-9][0-9]*))?)?/uy
const SIMPLE_ESCAPES = '"\\/bfnrt'
const HEX4 = /^[0-9a-fA-F]{4}$/u

/** The query read into a tree, or the first problem with its position (`at 14: …`). */
export function parseGoFeatureFlagQuery(text: string): { query: QueryNode } | { error: string } {
  try {
    const reader = new Reader(text)
    const query = reader.query()
    reader.space()
    if (!reader.done()) reader.fail(`expected "and", "or" or the end, found ${reader.shown()}`)
    return { query }
  } catch (e) {
    if (e instanceof QuerySyntaxError) return { error: e.message }
    throw e
  }
}

class QuerySyntaxError extends Error {}

/** Bounds of one query, far above what people write: parentheses inside each other, and tests. */
const MAX_DEPTH = 32
const MAX_TESTS = 500

class Reader {
  private at = 0
  private depth = 0
  private tests = 0
  constructor(private readonly text: string) {}

  done(): boolean {
    return this.at >= this.text.length
  }

  fail(what: string): never {
    throw new QuerySyntaxError(`at ${this.at + 1}: ${what}`)
  }

  shown(): string {
    if (this.done()) return 'the end'
    return JSON.stringify(this.text.slice(this.at, this.at + 12).split(/\s/u)[0] || this.text[this.at])
  }

  space(): void {
    while (!this.done() && /\s/u.test(this.text[this.at] as string)) this.at++
  }

  /** `re` (sticky) matched where the reader is. */
  private match(re: RegExp): string | undefined {
    re.lastIndex = this.at
    const m = re.exec(this.text)
    if (m === null) return undefined
    this.at += m[0].length
    return m[0]
  }

  private word(): string | undefined {
    NAME.lastIndex = this.at
    const m = NAME.exec(this.text)
    return m === null ? undefined : m[0]
  }

  query(): QueryNode {
    let left = this.primary()
    for (;;) {
      const mark = this.at
      this.space()
      const word = this.word()
      if (word !== 'and' && word !== 'or') {
        this.at = mark
        return left
      }
      this.at += word.length
      this.space()
      left = { kind: 'logical', op: word, left, right: this.primary() }
    }
  }

  private primary(): QueryNode {
    this.space()
    const word = this.word()
    if (word === 'not' || word === 'NOT') {
      this.at += word.length
      this.space()
      if (this.text[this.at] !== '(') this.fail(`expected "(" after "${word}"`)
      return { kind: 'not', query: this.group() }
    }
    if (this.text[this.at] === '(') return this.group()
    if (word === undefined) this.fail(`expected an attribute, "not" or "(", found ${this.shown()}`)
    if (++this.tests > MAX_TESTS) this.fail(`a query of more than ${MAX_TESTS} tests is not imported`)
    const path = this.path()
    this.space()
    const opStart = this.at
    const op = this.match(OPERATOR)
    if (op === 'pr') return { kind: 'present', path }
    const known = op === undefined ? undefined : OPS[op]
    if (known === undefined) {
      this.at = opStart
      this.fail(`expected an operator (eq, ne, lt, gt, le, ge, co, sw, ew, in, pr) after "${path.join('.')}", found ${this.shown()}`)
    }
    this.space()
    return { kind: 'compare', path, op: known, value: this.value(op as string) }
  }

  private group(): QueryNode {
    if (++this.depth > MAX_DEPTH) this.fail(`parentheses nested more than ${MAX_DEPTH} deep are not imported`)
    this.at++
    const inner = this.query()
    this.depth--
    this.space()
    if (this.text[this.at] !== ')') this.fail(`expected ")", found ${this.shown()}`)
    this.at++
    return inner
  }

  private path(): string[] {
    const path: string[] = []
    for (;;) {
      const name = this.word()
      if (name === undefined) this.fail(`expected an attribute name after "."`)
      this.at += name.length
      path.push(name)
      if (this.text[this.at] !== '.') return path
      this.at++
    }
  }

  private value(op: string): QueryValue {
    const c = this.text[this.at]
    if (c === undefined) this.fail(`expected a value after "${op}"`)
    if (c === '[') return this.list()
    if (c === '"') return { kind: 'string', value: this.string() }
    if (c === "'") this.fail('text is written in double quotes in GO Feature Flag queries')
    const version = this.match(VERSION)
    if (version !== undefined) return { kind: 'version', value: version }
    const number = this.match(NUMBER)
    if (number !== undefined) {
      if (number.includes('.')) return { kind: 'double', value: Number(number) }
      if (/[Ee]/u.test(number)) {
        this.at -= number.length
        this.fail(`an integer with an exponent (${number}) is not a number GO Feature Flag reads`)
      }
      return { kind: 'int', value: Number(number) }
    }
    const word = this.word()
    if (word === 'true' || word === 'false') {
      this.at += word.length
      return { kind: 'bool', value: word === 'true' }
    }
    if (word === 'null') {
      this.at += 4
      return { kind: 'null' }
    }
    this.fail(`expected a value after "${op}", found ${this.shown()}`)
  }

  /**
   * Text in double quotes, as written between them, read one character at a time: a regular
   * expression takes seconds on long text and gives up on text of some megabytes.
   */
  private string(): string {
    const text = this.text
    let i = this.at + 1
    for (;;) {
      const c = text[i]
      if (c === '"') break
      if (c === '\\') {
        const e = text[i + 1]
        if (e !== undefined && SIMPLE_ESCAPES.includes(e)) i += 2
        else if (e === 'u' && HEX4.test(text.slice(i + 2, i + 6))) i += 6
        else this.fail('unterminated text, or an escape other than \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX')
      } else if (c === undefined) this.fail('unterminated text, or an escape other than \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX')
      else i++
    }
    const value = text.slice(this.at + 1, i)
    this.at = i + 1
    return value
  }

  private list(): QueryValue {
    const start = this.at
    this.at++
    this.space()
    const items: QueryValue[] = []
    for (;;) {
      const c = this.text[this.at]
      if (c === '"') items.push({ kind: 'string', value: this.string() })
      else {
        const n = this.match(LIST_NUMBER)
        if (n === undefined) this.fail(`expected text or a number in the list, found ${this.shown()}`)
        items.push(n.includes('.') ? { kind: 'double', value: Number(n) } : { kind: 'int', value: Number(n) })
      }
      this.space()
      if (this.text[this.at] === ']') {
        this.at++
        break
      }
      if (this.text[this.at] !== ',') this.fail(`expected "," or "]" in the list, found ${this.shown()}`)
      this.at++
      this.space()
    }
    const kinds = new Set(items.map((i) => i.kind))
    if (kinds.size > 1) {
      this.at = start
      this.fail('a list holds values of one kind only (text, integers or decimals)')
    }
    const values = items.map((i) => (i as { value: string | number }).value)
    if (kinds.has('string')) return { kind: 'strings', value: values as string[] }
    if (kinds.has('int')) return { kind: 'ints', value: values as number[] }
    return { kind: 'doubles', value: values as number[] }
  }
}
