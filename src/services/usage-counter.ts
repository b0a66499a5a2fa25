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
 *
 * Pending counts hold no flag: they are kept by usage key (the flag's id and environment), and a
 * template by the keys of its flags, taken once per template. So a revision whose flags were
 * deleted or replaced is released when nothing else reads it, not at the next drain
 * (docs/performance.md#memory-that-goes-back).
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

/** A template's flags as pending counts keep them: usage keys, variants and reasons, by position. */
interface TemplateKeys {
  readonly keys: readonly string[]
  readonly variants: readonly string[]
  readonly reasons: readonly string[]
}

/** One hour's counts. */
interface Hour {
  hour: string
  /** usage key → variant → reason → cell */
  single: Map<string, Map<string, Map<string, Cell>>>
  /** each template counted this hour → its cell, and the cells with the keys they spread over */
  templateCells: WeakMap<CountedTemplate, Cell>
  templates: { keys: TemplateKeys; cell: Cell }[]
}

const emptyHour = (ms: number): Hour => ({ hour: hourOf(ms), single: new Map(), templateCells: new WeakMap(), templates: [] })

/** The in-memory counts (see module comment). */
export class UsageCounter {
  private now: number
  private current: Hour
  private finished: Hour[] = []
  private readonly tick: ReturnType<typeof setInterval>
  /** Each template's keys, taken once (templates are immutable). */
  private readonly templateKeys = new WeakMap<CountedTemplate, TemplateKeys>()
  private readonly flagKeys = new WeakMap<Flag, string>()

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

  /**
   * The key `flag`'s counts are kept and written under: each environment's view is its own flag. The
   * default environment's is the flag's id; another's is made once per view.
   */
  private keyOf(flag: Flag): string {
    const env = environmentOfView(flag)
    if (env === undefined || env === this.environment) return flag.id
    let key = this.flagKeys.get(flag)
    if (key === undefined) this.flagKeys.set(flag, (key = usageKey(flag.id, env)))
    return key
  }

  private cellOf(flag: Flag, variant: string, reason: string): Cell {
    const key = this.keyOf(flag)
    let variants = this.current.single.get(key)
    if (variants === undefined) this.current.single.set(key, (variants = new Map()))
    let reasons = variants.get(variant)
    if (reasons === undefined) variants.set(variant, (reasons = new Map()))
    let cell = reasons.get(reason)
    if (cell === undefined) reasons.set(reason, (cell = { count: 0, last: this.clock() }))
    return cell
  }

  /** One bulk answer of `template`'s fixed flags. */
  countTemplate(template: CountedTemplate): void {
    const cell = this.current.templateCells.get(template)
    if (cell === undefined) {
      let keys = this.templateKeys.get(template)
      if (keys === undefined)
        this.templateKeys.set(
          template,
          (keys = {
            keys: template.fixed.map((f) => this.keyOf(f.flag)),
            variants: template.fixed.map((f) => f.variant),
            reasons: template.fixed.map((f) => f.reason),
          }),
        )
      const made = { count: 1, last: this.clock() }
      this.current.templateCells.set(template, made)
      this.current.templates.push({ keys, cell: made })
    } else {
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
    return bucketsOf(hours)
  }

  /** Everything counted so far, as buckets, kept. */
  peek(): UsageBucket[] {
    return bucketsOf([...this.finished, this.current])
  }

  /** Stops the clock. */
  stop(): void {
    clearInterval(this.tick)
  }
}

/** Hours of counts as buckets, one per flag id, hour, variant and reason. */
function bucketsOf(hours: readonly Hour[]): UsageBucket[] {
  const buckets = new Map<string, UsageBucket>()
  const add = (hour: string, flagId: string, variant: string, reason: string, cell: Cell) => {
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
    for (const [flagId, variants] of h.single)
      for (const [variant, reasons] of variants) for (const [reason, cell] of reasons) add(h.hour, flagId, variant, reason, cell)
    for (const { keys: t, cell } of h.templates)
      for (let i = 0; i < t.keys.length; i++) add(h.hour, t.keys[i] as string, t.variants[i] as string, t.reasons[i] as string, cell)
  }
  return [...buckets.values()]
}
