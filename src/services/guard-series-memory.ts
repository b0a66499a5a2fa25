/**
 * The last values of the cumulative series that feed guards (docs/guarded-rollouts.md#the-applications-metrics),
 * by reporter and series digest, so a cumulative point counts by its increase and never twice. Each
 * value is taken under the rollout write it was seen after (its epoch): a rollout written again
 * starts every series afresh. Bounded in bytes, all reporters together: past the budget the oldest
 * series are forgotten (a forgotten series that reports again takes its next value as a baseline).
 */

/** The bytes the remembered series may take. */
export const GUARD_SERIES_BYTES = 8 * 2 ** 20
/** What one remembered series costs besides its key, start and values: the map's slot and the entry. */
const OVERHEAD = 120

/** One remembered series. */
export interface SeenSeries {
  epoch: number
  start: string
  values: readonly number[]
}

/** The table (see module comment). */
export class GuardSeriesMemory {
  private readonly seen = new Map<string, SeenSeries>()
  private used = 0

  constructor(private readonly budget = GUARD_SERIES_BYTES) {}

  private static cost(key: string, s: SeenSeries): number {
    return 2 * (key.length + s.start.length) + 8 * s.values.length + OVERHEAD
  }

  /** The series' last value, if remembered. */
  get(key: string): SeenSeries | undefined {
    return this.seen.get(key)
  }

  /** Remembers `series` as the newest (forgetting the oldest past the budget). */
  set(key: string, series: SeenSeries): void {
    const before = this.seen.get(key)
    if (before !== undefined) {
      this.seen.delete(key)
      this.used -= GuardSeriesMemory.cost(key, before)
    }
    this.seen.set(key, series)
    this.used += GuardSeriesMemory.cost(key, series)
    if (this.used <= this.budget) return
    // a quarter of the budget at once, in one pass from the oldest: forgetting one series per new
    // one would start a walk past every slot deleted before it, each time
    for (const [oldest, s] of this.seen) {
      if (this.used <= this.budget * 0.75) break
      this.used -= GuardSeriesMemory.cost(oldest, s)
      this.seen.delete(oldest)
    }
  }

  /** How many series are remembered and the bytes they are reckoned to take. */
  stored(): { series: number; bytes: number } {
    return { series: this.seen.size, bytes: this.used }
  }
}

/** True when a series whose start is `start` (ns since the epoch, decimal) began after `fromMs`. */
export function startedAfter(start: string, fromMs: number): boolean {
  if (!/^\d{1,20}$/.test(start)) return false
  // decimal text compared as numbers: by length without leading zeros, then digit by digit
  const a = start.replace(/^0+(?=\d)/, '')
  const b = `${Math.max(0, Math.floor(fromMs))}000000`.replace(/^0+(?=\d)/, '')
  return a.length !== b.length ? a.length > b.length : a > b
}

/**
 * What a cumulative point adds, given the series' last value under the same epoch: its increase when
 * the series went on (same start, no value lower); `'stale'` when it has the same start and a lower
 * value, an older point arriving late (an exporter's retry), which counts nothing and must not become
 * the series' last value or what lies between would count twice; else the whole value when the
 * series started after the rollout was written (a new or restarted series); else nothing (the value
 * is a baseline). A series without a start cannot tell a late point from a reset and takes a lower
 * value as a new baseline.
 */
export function cumulativeIncrease(
  before: SeenSeries | undefined,
  epoch: number,
  start: string,
  values: readonly number[],
): number[] | 'stale' {
  if (before !== undefined && before.epoch === epoch && before.start === start && before.values.length === values.length) {
    const out = values.map((v, i) => v - (before.values[i] as number))
    // a histogram's sum may go down (negative measurements); its count and buckets may not
    if (out.every((d, i) => d >= 0 || (values.length > 1 && i === 1))) return out
    if (start !== '') return 'stale'
  }
  return startedAfter(start, epoch) ? [...values] : values.map(() => 0)
}
