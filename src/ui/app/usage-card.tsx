/**
 * A flag's usage on its page (docs/api.md#usage): evaluations per day over the last 7 days as a small bar
 * chart drawn as SVG (nothing downloaded, nothing added to the bundle but this), the variants
 * answered, and when the flag was last evaluated.
 */

import { useEffect, useState } from 'preact/hooks'
import { api } from './api.ts'
import { countOf } from './count-words.ts'
import { localTime } from './local-time.ts'
import { DAY_MS, DAYS, dailyTotals, inProcessNote, type Usage } from './usage-summary.ts'

export function UsageCard({ name, revision }: { name: string; revision: number }) {
  const [usage, setUsage] = useState<Usage | null>(null)
  useEffect(() => {
    const since = new Date(Math.floor(Date.now() / DAY_MS) * DAY_MS - (DAYS - 1) * DAY_MS).toISOString()
    void api
      .GET('/api/flags/{flagName}/usage', { params: { path: { flagName: name }, query: { since } } })
      .then(({ data }) => data && setUsage(data as Usage))
  }, [name, revision])
  if (!usage) return null
  const days = dailyTotals(usage.hours, Date.now())
  const top = Math.max(1, ...days.map((d) => d.count))
  const width = 280
  const height = 64
  const bar = width / DAYS
  const summary = `${countOf(usage.total, 'evaluation')} in 7 days; ${days.map((d) => `${d.day.slice(5)}: ${d.count}`).join(', ')}`
  return (
    <section class="card usage" aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <p class="meta">
        {usage.lastEvaluatedAt ? `Last evaluated ${localTime(usage.lastEvaluatedAt)}` : 'Never evaluated (in the last 7 days)'} ·{' '}
        {countOf(usage.total, 'evaluation')} in 7 days
        {Object.keys(usage.variants).length > 0 &&
          ` · ${Object.entries(usage.variants)
            .map(([v, n]) => `${v} ${n}`)
            .join(', ')}`}
      </p>
      {inProcessNote(usage) && <p class="meta in-process">{inProcessNote(usage)}</p>}
      <svg class="usage-chart" viewBox={`0 0 ${width} ${height + 14}`} role="img" aria-label={summary}>
        {days.map((d, i) => {
          const h = Math.round((d.count / top) * height)
          return (
            <g key={d.day}>
              <rect x={i * bar + 3} y={height - h} width={bar - 6} height={Math.max(h, d.count > 0 ? 1 : 0)} rx="2" />
              <text x={i * bar + bar / 2} y={height + 11} text-anchor="middle">
                {d.day.slice(8)}
              </text>
            </g>
          )
        })}
        <line x1="0" y1={height + 0.5} x2={width} y2={height + 0.5} />
      </svg>
    </section>
  )
}
