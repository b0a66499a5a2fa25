/**
 * Counting evaluations on the hot path (docs/api.md#usage): in memory, with no write and no allocation per
 * evaluation once a flag's outcome has a cell. Counts are kept per hour (UTC) by a clock that ticks
 * once a second (the time of the last evaluation is read from the clock itself, so it is never
 * earlier than the evaluation), and handed to the usage service as hourly buckets when it drains them (at most once
 * a minute, and at shutdown). Only flags that exist are counted: the evaluation service passes the
 * stored row, never a name a client made up, so the counter cannot grow with unknown keys.
 *
 * A bulk answer's context-free part (its template) is counted once per answer, not once per flag:
 * the drain spreads it over the flags it holds. So counting a bulk of 1,000 flags costs one increment.
 */

import type { Flag } from '../domain/flag.ts'
import { hourOf, type UsageBucket, usageKey } from '../domain/flag-usage.ts'
import { environmentOfView } from './environment-views.ts'

/** How many times one outcome was answered in the hour, and when last (ms). */
export interface Cell {
  count: number
  last: number
}

/** The flags a bulk template answers without a context, each with its fixed outcome. */
export interface CountedTemplate {
  readonly fixed: readonly { flag: Flag; variant: string; reason: string }[]
}

/**
 * An answer that is given again and again (a flag's fixed answer, a rule's answer per outcome): it
 * keeps its cell of the current hour, so counting it again is one comparison and one increment.
 */
export interface CountableAnswer {
  readonly variant: string
  readonly reason: string
  cell?: Cell
  hour?: object
}

/** One hour's counts. */
interface Hour {
  hour: string
  /** flag row → variant → reason → cell */
  single: Map<Flag, Map<string, Map<string, Cell>>>
  templates: Map<CountedTemplate, Cell>
}

const emptyHour = (ms: number): Hour => ({ hour: hourOf(ms), single: new Map(), templates: new Map() })

/** The in-memory counts (see module comment). */
export class UsageCounter {
  private now: number
  private current: Hour
  private finished: Hour[] = []
  private readonly tick: ReturnType<typeof setInterval>

  /** `clock` in milliseconds; `environment`: the default one, counted under the bare flag id (see `usageKey`). */
  constructor(
    private readonly clock: () => number,
    private readonly environment: string,
  ) {
    this.now = clock()
    this.current = emptyHour(this.now)
    this.tick = setInterval(() => this.advance(), 1000)
    this.tick.unref?.()
  }

  /** Moves the clock; a new hour starts a new set of counts. */
  advance(): void {
    this.now = this.clock()
    const hour = hourOf(this.now)
    if (hour !== this.current.hour) {
      this.finished.push(this.current)
      this.current = emptyHour(this.now)
    }
  }

  /** One evaluation of `flag` answering `variant` ('' for none) for `reason`. */
  count(flag: Flag, variant: string, reason: string): void {
    const cell = this.cellOf(flag, variant, reason)
    cell.count++
    cell.last = this.clock()
  }

  /** `n` evaluations of `flag` made elsewhere (an in-process provider reporting over OTLP), counted now. */
  countMany(flag: Flag, variant: string, reason: string, n: number): void {
    if (n <= 0) return
    const cell = this.cellOf(flag, variant, reason)
    cell.count += n
    cell.last = this.clock()
  }

  /** One evaluation of `flag` given `answer` (see {@link CountableAnswer}). */
  countAnswer(flag: Flag, answer: CountableAnswer): void {
    let cell = answer.cell
    if (answer.hour !== this.current || cell === undefined) {
      cell = answer.cell = this.cellOf(flag, answer.variant, answer.reason)
      answer.hour = this.current
    }
    cell.count++
    cell.last = this.clock()
  }

  private cellOf(flag: Flag, variant: string, reason: string): Cell {
    let variants = this.current.single.get(flag)
    if (variants === undefined) this.current.single.set(flag, (variants = new Map()))
    let reasons = variants.get(variant)
    if (reasons === undefined) variants.set(variant, (reasons = new Map()))
    let cell = reasons.get(reason)
    if (cell === undefined) reasons.set(reason, (cell = { count: 0, last: this.clock() }))
    return cell
  }

  /** One bulk answer of `template`'s fixed flags. */
  countTemplate(template: CountedTemplate): void {
    const cell = this.current.templates.get(template)
    if (cell === undefined) this.current.templates.set(template, { count: 1, last: this.clock() })
    else {
      cell.count++
      cell.last = this.clock()
    }
  }

  /** Everything counted so far, as buckets (by flag id), and forgets it. */
  drain(): UsageBucket[] {
    this.advance()
    const hours = [...this.finished, this.current]
    this.finished = []
    this.current = emptyHour(this.now)
    return bucketsOf(hours, this.environment)
  }

  /** Everything counted so far, as buckets, kept. */
  peek(): UsageBucket[] {
    return bucketsOf([...this.finished, this.current], this.environment)
  }

  /** Stops the clock. */
  stop(): void {
    clearInterval(this.tick)
  }
}

/** Hours of counts as buckets, one per flag id, hour, variant and reason. */
function bucketsOf(hours: readonly Hour[], environment: string): UsageBucket[] {
  const buckets = new Map<string, UsageBucket>()
  const add = (hour: string, flag: Flag, variant: string, reason: string, cell: Cell) => {
    // each environment's view is its own flag object: counted under its own key
    const env = environmentOfView(flag)
    const flagId = usageKey(flag.id, env === environment ? undefined : env)
    const key = `${flagId}\u0000${hour}\u0000${variant}\u0000${reason}`
    const lastAt = new Date(cell.last).toISOString()
    const known = buckets.get(key)
    if (known === undefined) buckets.set(key, { flagId, hour, variant, reason, count: cell.count, lastAt })
    else {
      known.count += cell.count
      if (lastAt > known.lastAt) known.lastAt = lastAt
    }
  }
  for (const h of hours) {
    for (const [flag, variants] of h.single)
      for (const [variant, reasons] of variants) for (const [reason, cell] of reasons) add(h.hour, flag, variant, reason, cell)
    for (const [template, cell] of h.templates) for (const f of template.fixed) add(h.hour, f.flag, f.variant, f.reason, cell)
  }
  return [...buckets.values()]
}
