/**
 * The few metric kinds flagd keeps besides the per-request ones, rendered in the Prometheus text
 * format (0.0.4) at scrape time: counters with or without labels, histograms, and gauges read when
 * scraped. It replaces prom-client, of which flagd used only these: loading it cost an idle daemon
 * memory that these few kinds do not need (docs/performance.md#what-start-up-does-not-load), and
 * the per-request metrics had already left it for speed.
 */

/** The content type of the Prometheus text format. */
export const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8'

/** A counter; `labels` must name exactly the label names it was made with. */
export interface Counter {
  /** Adds `by` (default 1) to the series of `labels`. */
  inc(labels?: Readonly<Record<string, string>>, by?: number): void
}

/** A histogram without labels. */
export interface Histogram {
  observe(value: number): void
}

/** Metrics by name, rendered in the order they were made. */
export interface MetricRegistry {
  /**
   * A counter; `pending`, read at scrape time, adds counts not yet handed to it (so a scrape shows
   * the counts as of now, not as of the last hand-over).
   */
  counter(name: string, help: string, labelNames?: readonly string[], pending?: () => Iterable<[Record<string, string>, number]>): Counter
  histogram(name: string, help: string, buckets: readonly number[]): Histogram
  /** A gauge whose value is read at scrape time. */
  gauge(name: string, help: string, read: () => number): void
  render(): string
}

/** A label value as the text format writes it. */
export const escapeLabel = (v: string) => v.replaceAll('\\', '\\\\').replaceAll('"', '\\"').replaceAll('\n', '\\n')

/**
 * The sample lines of one histogram series: cumulative `_bucket` lines (the last one `+Inf`), `_sum`
 * and `_count`. `labels` is the series' label text without braces ('' for none); `perBucket` holds the
 * observations per bucket, not yet cumulative, with one more entry than `bounds` (the +Inf bucket).
 */
export function histogramLines(
  name: string,
  labels: string,
  bounds: readonly number[],
  perBucket: ArrayLike<number>,
  sum: number,
  count: number,
): string[] {
  const lines: string[] = []
  const tail = labels === '' ? '' : `,${labels}`
  let cumulative = 0
  bounds.forEach((le, i) => {
    cumulative += perBucket[i] as number
    lines.push(`${name}_bucket{le="${le}"${tail}} ${cumulative}`)
  })
  lines.push(`${name}_bucket{le="+Inf"${tail}} ${count}`)
  const braces = labels === '' ? '' : `{${labels}}`
  lines.push(`${name}_sum${braces} ${sum}`, `${name}_count${braces} ${count}`)
  return lines
}

/** Creates an empty registry. */
export function createMetricRegistry(): MetricRegistry {
  const renderers: (() => string[])[] = []
  const header = (name: string, help: string, type: string) => [`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`]
  return {
    counter(name, help, labelNames = [], pending) {
      const values = new Map<string, number>()
      const keyOf = (labels: Record<string, string>) => labelNames.map((l) => `${l}="${escapeLabel(labels[l] ?? '')}"`).join(',')
      renderers.push(() => {
        const lines = header(name, help, 'counter')
        let shown = values
        if (pending) {
          shown = new Map(values)
          for (const [labels, by] of pending()) shown.set(keyOf(labels), (shown.get(keyOf(labels)) ?? 0) + by)
        }
        for (const [labels, value] of shown) lines.push(`${name}${labels === '' ? '' : `{${labels}}`} ${value}`)
        if (labelNames.length === 0 && shown.size === 0) lines.push(`${name} 0`)
        return lines
      })
      return {
        inc(labels = {}, by = 1) {
          const key = keyOf(labels)
          values.set(key, (values.get(key) ?? 0) + by)
        },
      }
    },
    histogram(name, help, buckets) {
      const perBucket = new Float64Array(buckets.length + 1)
      let sum = 0
      let count = 0
      renderers.push(() => [...header(name, help, 'histogram'), ...histogramLines(name, '', buckets, perBucket, sum, count)])
      return {
        observe(value) {
          let i = 0
          while (i < buckets.length && value > (buckets[i] as number)) i++
          perBucket[i] = (perBucket[i] as number) + 1
          sum += value
          count++
        },
      }
    },
    gauge(name, help, read) {
      renderers.push(() => [...header(name, help, 'gauge'), `${name} ${read()}`])
    },
    render: () => `${renderers.map((r) => r().join('\n')).join('\n\n')}\n`,
  }
}
