/**
 * Times as the person reading the page reads them (docs/ui.md#times): the date and time in the
 * browser's locale and time zone, with the zone named, so "tomorrow 09:00 UTC" shows as the
 * reader's own 10:00 CET. The exact moment stays in each `<time>`'s `datetime` and title.
 */

/**
 * Formatters by locale and zone: making an `Intl.DateTimeFormat` costs far more than using one, and
 * a table renders a time in every row (the keys come from the code, a handful at most).
 */
const formatters = new Map<string, Intl.DateTimeFormat>()

/** "Dec 8, 2026, 10:00 AM GMT+1" (in the viewer's locale and zone, or the ones given); an unreadable time as given. */
export function localTime(iso: string, locale?: string, timeZone?: string): string {
  const at = new Date(iso)
  if (Number.isNaN(at.getTime())) return iso
  const key = `${locale ?? ''}\n${timeZone ?? ''}`
  let format = formatters.get(key)
  if (!format) {
    format = new Intl.DateTimeFormat(locale, {
      year: 'numeric',
      month: 'short',
      day: 'numeric',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
      ...(timeZone ? { timeZone } : {}),
    })
    formatters.set(key, format)
  }
  return format.format(at)
}
