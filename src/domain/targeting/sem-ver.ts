/**
 * flagd's `sem_ver` operator (custom-operations/semver-operation): compares two semantic versions
 * with `=`, `!=`, `<`, `<=`, `>`, `>=`, `^` (same major) or `~` (same major and minor). Lenient the
 * way flagd is: a leading `v`/`V` is dropped, a number is read as its text, and a partial version
 * of one or two numbers (`1`, `1.2`) stands for `1.0.0`, `1.2.0`. Anything else that is not a
 * Semantic Versioning 2.0 version, an unknown operator or a wrong number of arguments gives `null`,
 * so the flag's default is served rather than an error. Build metadata never counts; pre-releases
 * order before their release, identifier by identifier (numeric ones numerically, below others).
 */

/** A parsed version. */
export interface SemVersion {
  major: number
  minor: number
  patch: number
  prerelease: (string | number)[]
}

/** The longest text `sem_ver` reads as a version. */
export const SEM_VER_MAX_LENGTH = 256
const IDENT = '(?:\\d*[a-zA-Z-][a-zA-Z0-9-]*|0|[1-9]\\d*)'
const STRICT = new RegExp(
  `^v?(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+[a-zA-Z0-9-]+(?:\\.[a-zA-Z0-9-]+)*)?$`,
)
const PARTIAL = /^\d+(\.\d+)?$/
// the first run of one to three dot-separated numbers of at most 16 digits, not inside a longer number
const COERCE = /(^|[^\d])(\d{1,16})(?:\.(\d{1,16}))?(?:\.(\d{1,16}))?(?:$|[^\d])/

/** A strict Semantic Versioning 2.0 version (an optional leading `v`, surrounding blanks ignored). */
export function parseStrictVersion(text: string): SemVersion | undefined {
  if (text.length > SEM_VER_MAX_LENGTH) return undefined
  const m = STRICT.exec(text.trim())
  if (!m) return undefined
  const major = Number(m[1])
  const minor = Number(m[2])
  const patch = Number(m[3])
  if (major > Number.MAX_SAFE_INTEGER || minor > Number.MAX_SAFE_INTEGER || patch > Number.MAX_SAFE_INTEGER) return undefined
  const prerelease =
    m[4] === undefined ? [] : m[4].split('.').map((id) => (/^\d+$/.test(id) && Number(id) < Number.MAX_SAFE_INTEGER ? Number(id) : id))
  return { major, minor, patch, prerelease }
}

// versions read lately: a rule compares the same few (its literals, the apps' versions) over and over
const readCache = new Map<string, SemVersion | null>()
const READ_CACHE_MAX = 1000

/** A version as `sem_ver` reads an operand, or `undefined` when it is none. */
export function readVersion(raw: unknown): SemVersion | undefined {
  if (typeof raw !== 'string' || raw.length > 64) return parseVersion(raw)
  const known = readCache.get(raw)
  if (known !== undefined) return known ?? undefined
  const parsed = parseVersion(raw)
  if (readCache.size >= READ_CACHE_MAX) readCache.clear()
  readCache.set(raw, parsed ?? null)
  return parsed
}

function parseVersion(raw: unknown): SemVersion | undefined {
  const text = String(raw).replace(/^[vV]/, '')
  const strict = parseStrictVersion(text)
  if (strict || !PARTIAL.test(text)) return strict
  const m = COERCE.exec(text)
  return m ? parseStrictVersion(`${m[2]}.${m[3] ?? '0'}.${m[4] ?? '0'}`) : undefined
}

function compareIdentifiers(a: string | number, b: string | number): number {
  if (typeof a === 'number' && typeof b === 'number') return a === b ? 0 : a < b ? -1 : 1
  const aNumeric = /^\d+$/.test(String(a))
  const bNumeric = /^\d+$/.test(String(b))
  if (aNumeric && bNumeric) return Number(a) === Number(b) ? 0 : Number(a) < Number(b) ? -1 : 1
  if (aNumeric !== bNumeric) return aNumeric ? -1 : 1
  return a === b ? 0 : a < b ? -1 : 1
}

/** −1, 0 or 1 by Semantic Versioning precedence. */
export function compareVersions(a: SemVersion, b: SemVersion): number {
  if (a.major !== b.major) return a.major < b.major ? -1 : 1
  if (a.minor !== b.minor) return a.minor < b.minor ? -1 : 1
  if (a.patch !== b.patch) return a.patch < b.patch ? -1 : 1
  const pa = a.prerelease
  const pb = b.prerelease
  if (pa.length === 0 || pb.length === 0) return pa.length === pb.length ? 0 : pa.length === 0 ? 1 : -1
  for (let i = 0; ; i++) {
    if (i >= pa.length || i >= pb.length) return pa.length === pb.length ? 0 : i >= pa.length ? -1 : 1
    const c = compareIdentifiers(pa[i] as string | number, pb[i] as string | number)
    if (c !== 0) return c
  }
}

/** The `sem_ver` operator over its evaluated arguments: a boolean, or `null` on bad input. */
export function semVer(args: readonly unknown[]): boolean | null {
  if (args.length !== 3) return null
  const a = readVersion(args[0])
  const b = readVersion(args[2])
  if (!a || !b) return null
  const c = compareVersions(a, b)
  switch (String(args[1])) {
    case '=':
      return c === 0
    case '!=':
      return c !== 0
    case '<':
      return c < 0
    case '<=':
      return c <= 0
    case '>':
      return c > 0
    case '>=':
      return c >= 0
    case '^':
      return a.major === b.major
    case '~':
      return a.major === b.major && a.minor === b.minor
    default:
      return null
  }
}
