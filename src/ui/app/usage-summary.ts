/**
 * What a flag's usage card says, apart from drawing it (docs/api.md#usage): the seven days of its
 * chart and the sentence on in-process use; plain functions, tested without a browser.
 */

import { localTime } from './local-time.ts'

/** A flag's usage as `GET /api/flags/{name}/usage` answers it (the fields the page shows). */
export type Usage = {
  total: number
  lastEvaluatedAt: string | null
  lastServedInProcessAt: string | null
  heldInProcess: boolean
  variants: Record<string, number>
  hours: { at: string; count: number }[]
}

/**
 * What the page says of in-process use (`lastServedInProcessAt`, `heldInProcess`): a flag served to
 * an in-process provider is in use and never stale, though its evaluations there count only when
 * reported over OTLP. "Now" is the daemon's word, never a guess from the time.
 */
export function inProcessNote(usage: Pick<Usage, 'lastServedInProcessAt' | 'heldInProcess'>): string | null {
  const { lastServedInProcessAt, heldInProcess } = usage
  if (lastServedInProcessAt === null) return null
  const served = heldInProcess ? 'held by an in-process provider now' : `last served in-process ${localTime(lastServedInProcessAt)}`
  return `Also used in-process: ${served} (so it is not stale; evaluations there count when the application reports them over OTLP)`
}

/** Days the chart shows. */
export const DAYS = 7
export const DAY_MS = 86_400_000

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
