/**
 * The one reader of ISO 8601 instants in queries and files (`?since=`, `?until=`, a migration file's
 * `createdAt`): a date (`2026-11-01`, midnight UTC) or a date-time with a zone
 * (`2026-11-01T10:00:00Z`, `…+01:00`). `Date.parse` alone is lenient: it reads `2026-11-27 junk`,
 * rolls `2026-02-31` over into March and takes year 0; none of those is what anybody meant.
 */

const FORM = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2}))?$/

/** The earliest and latest years accepted (before 1970 nothing of flagd's exists; past 9999 ISO needs a sign). */
const YEARS = [1970, 9999] as const

/** Milliseconds since the epoch of `text`, or `undefined` when it is not such an instant. `dateTimeOnly` refuses a bare date. */
export function parseIsoInstant(text: string, dateTimeOnly = false): number | undefined {
  const m = FORM.exec(text)
  if (!m) return undefined
  const [, y, mo, d, h, mi, s, zone] = m
  if (dateTimeOnly && h === undefined) return undefined
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  if (year < YEARS[0] || year > YEARS[1] || month < 1 || month > 12) return undefined
  if (day < 1 || day > new Date(Date.UTC(year, month, 0)).getUTCDate()) return undefined
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || (s !== undefined && Number(s) > 59))) return undefined
  if (zone !== undefined && zone !== 'Z') {
    const [zh, zm] = [Number(zone.slice(1, 3)), Number(zone.slice(-2))]
    if (zh > 23 || zm > 59) return undefined
  }
  const at = Date.parse(
    zone !== undefined && zone !== 'Z' && zone.length === 5 ? `${text.slice(0, -5)}${zone.slice(0, 3)}:${zone.slice(3)}` : text,
  )
  return Number.isNaN(at) ? undefined : at
}
