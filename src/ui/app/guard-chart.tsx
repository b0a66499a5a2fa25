/**
 * A check's arms over time as a small line chart (docs/ui.md#guarded-rollouts), drawn as inline
 * SVG with nothing downloaded: the new variant as a solid line, the others dashed, a threshold's
 * limit as a red rule. The chart is one image for screen readers, named after its metric and
 * saying where the lines end.
 */

import type { CheckSeries } from './guard-series.ts'
import { inUnits, percentOf } from './guard-words.ts'

const WIDTH = 280
const HEIGHT = 72

/** Points of a line, scaled to the chart; gaps (no samples yet) are skipped. */
function pointsOf(values: (number | null)[], top: number): string {
  const n = Math.max(1, values.length - 1)
  return values
    .map((v, i) =>
      v === null ? null : `${(values.length === 1 ? WIDTH / 2 : (i / n) * WIDTH).toFixed(1)},${(HEIGHT - (v / top) * HEIGHT).toFixed(1)}`,
    )
    .filter((p) => p !== null)
    .join(' ')
}

/** Where a line ends, marked with a dot: a line of one step (a burst of reports in one step) is the dot alone. */
function endOf(values: (number | null)[], top: number): { x: number; y: number } | null {
  const n = Math.max(1, values.length - 1)
  for (let i = values.length - 1; i >= 0; i--) {
    const v = values[i]
    if (v !== null && v !== undefined) return { x: values.length === 1 ? WIDTH / 2 : (i / n) * WIDTH, y: HEIGHT - (v / top) * HEIGHT }
  }
  return null
}

/** The last value of a line that has one. */
const lastOf = (values: (number | null)[]) => [...values].reverse().find((v) => v !== null) ?? null

/** A check's arms over time as an SVG line chart, one image named after its metric. */
export function GuardChart({ label, series, rate }: { label: string; series: CheckSeries; rate: boolean }) {
  const show = (v: number | null) => (v === null ? 'none yet' : rate ? percentOf(v) : inUnits(v))
  const treatment = series.lines.find((l) => l.arm === 'treatment')
  const control = series.lines.find((l) => l.arm === 'control')
  const words = [
    `new variant ${show(lastOf(treatment?.values ?? []))}`,
    control ? `others ${show(lastOf(control.values))}` : null,
    series.limit !== null ? `limit ${inUnits(series.limit)}` : null,
  ]
    .filter(Boolean)
    .join(', ')
  const all = series.lines.flatMap((l) => l.values.filter((v): v is number => v !== null))
  const top = Math.max(series.limit ?? 0, ...all, rate ? 0.001 : 1e-9) * 1.1
  return (
    <figure class="guard-chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT + 2}`} role="img" aria-label={`${label} over time: ${words}`}>
        <line class="axis" x1="0" y1={HEIGHT + 0.5} x2={WIDTH} y2={HEIGHT + 0.5} />
        {series.limit !== null && (
          <line class="limit" x1="0" x2={WIDTH} y1={HEIGHT - (series.limit / top) * HEIGHT} y2={HEIGHT - (series.limit / top) * HEIGHT} />
        )}
        {control && <polyline class="control" points={pointsOf(control.values, top)} />}
        {treatment && <polyline class="treatment" points={pointsOf(treatment.values, top)} />}
        {[control, treatment].map((line) => {
          const end = line ? endOf(line.values, top) : null
          return line && end && <circle key={line.arm} class={line.arm} cx={end.x.toFixed(1)} cy={end.y.toFixed(1)} r="2.5" />
        })}
      </svg>
      <figcaption class="meta">
        <span class="key treatment">new variant</span>
        {control && <span class="key control">others</span>}
        {series.limit !== null && <span class="key limit">limit</span>} · {series.at.length === 0 ? 'nothing reported yet' : words}
      </figcaption>
    </figure>
  )
}
