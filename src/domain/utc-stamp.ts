/** The compact UTC time stamp in export file names and drop-folder names: `20261122-101500`. */

/** `YYYYMMDD-HHMMSS` of `at`, in UTC. */
export function utcStamp(at: Date): string {
  const iso = at.toISOString()
  return `${iso.slice(0, 10).replaceAll('-', '')}-${iso.slice(11, 19).replaceAll(':', '')}`
}
