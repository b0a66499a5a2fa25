/**
 * A flag's usage on its page (docs/api.md#usage): evaluations per day over the last 7 days as a small bar
 * chart drawn as SVG (nothing downloaded, nothing added to the bundle but this), the variants
 * answered, and when the flag was last evaluated.
 */

import { useEffect, useState } from 'preact/hooks'
import { api } from './api.ts'
import { shortTime } from './audit-diff.ts'

type Usage = {
  total: number
  lastEvaluatedAt: string | null
  lastSyncedAt: string | null
  variants: Record<string, number>
  hours: { at: string; count: number }[]
}

/** What the page says of in-process use, which is not counted (a flag held in-process is in use). */
export function inProcessNote(lastSyncedAt: string | null, nowMs: number): string | null {
  if (lastSyncedAt === null) return null
  const held =
    nowMs - Date.parse(lastSyncedAt) < 60_000 ? 'held by an in-process provider now' : `last held in-process ${shortTime(lastSyncedAt)}`
  return `Also used in-process: ${held} (in-process evaluations are not counted, so it is not stale)`
}

const DAYS = 7
const DAY_MS = 86_400_000

/** The last 7 days (UTC, today last) with their totals. */
export function dailyTotals(hours: Usage['hours'], nowMs: number): { day: string; count: number }[] {
  const today = Math.floor(nowMs / DAY_MS) * DAY_MS
  const days = Array.from({ length: DAYS }, (_, i) => ({
    day: new Date(today - (DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10),
    count: 0,
  }))
  for (const h of hours) {
    const d = days.find((x) => x.day === h.at.slice(0, 10))
    if (d) d.count += h.count
  }
  return days
}

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
  const summary = `${usage.total} evaluations in 7 days; ${days.map((d) => `${d.day.slice(5)}: ${d.count}`).join(', ')}`
  return (
    <section class="card usage" aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <p class="meta">
        {usage.lastEvaluatedAt ? `Last evaluated ${shortTime(usage.lastEvaluatedAt)}` : 'Never evaluated (in the last 7 days)'} ·{' '}
        {usage.total} evaluations in 7 days
        {Object.keys(usage.variants).length > 0 &&
          ` · ${Object.entries(usage.variants)
            .map(([v, n]) => `${v} ${n}`)
            .join(', ')}`}
      </p>
      {inProcessNote(usage.lastSyncedAt, Date.now()) && <p class="meta in-process">{inProcessNote(usage.lastSyncedAt, Date.now())}</p>}
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
