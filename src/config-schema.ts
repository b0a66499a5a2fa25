/**
 * Every configuration key, its default, and how a raw value (from the config file, an environment
 * variable or a command-line flag) is checked and converted. One table, so the loader, the
 * environment mapping and docs/configuration.md cannot drift apart.
 */

import ipaddr from 'ipaddr.js'
import { type OidcConfig, parseOidcConfig } from './config-oidc.ts'
import { AUDIT_ENTITY } from './domain/audit-entry.ts'
import { DEFAULT_ENVIRONMENT, environmentNameProblem } from './domain/environment.ts'

/** The validated configuration the daemon and the CLI run with. */
export interface Config {
  host: string
  port: number
  dataDir: string
  environment: string
  publicExport: boolean
  trustProxy: string[]
  logLevel: 'debug' | 'info' | 'warn' | 'error'
  metrics: { enabled: boolean; perFlag: boolean }
  cors: { origins: string[] }
  streams: { heartbeatSeconds: number }
  audit: { retentionDays: number }
  webhooks: WebhookConfig[]
  /** Where state lives (docs/operations.md#replicas): the JSON file in dataDir, or one PostgreSQL database shared by replicas. */
  storage: { backend: 'file' | 'postgres'; postgresUrl: string | undefined }
  auth: {
    tokenTtl: number
    secret: string | undefined
    loginMaxFailuresPerUser: number
    loginMaxFailuresPerUserTotal: number
    loginUserWindowSeconds: number
    loginMaxFailuresPerAddress: number
    loginAddressWindowSeconds: number
    /** Single sign-on for the web UI (docs/single-sign-on.md); absent: passwords only. */
    oidc: OidcConfig | undefined
  }
  limits: { bodyBytes: number; importBytes: number; maxFlags: number; cacheBytes: number }
  /** Flag usage (docs/api.md#usage): whether evaluations are counted, and after how many days unused a flag is stale. */
  usage: { count: boolean; staleDays: number }
  /** Each flag kind's expected lifetime in days, `null` for none (docs/api.md#lifecycle): past it a flag is potentially stale. */
  lifecycle: {
    releaseDays: number | null
    experimentDays: number | null
    operationalDays: number | null
    killSwitchDays: number | null
    /** The same as `killSwitchDays`, spelt with the kind's own name; wins when set. */
    'kill-switchDays'?: number | null
    permissionDays: number | null
  }
  /** flagd's gRPC sync protocol for in-process providers (docs/openfeature.md#in-process): off unless a port or socket is set. */
  sync: { port: number | undefined; host: string; socket: string | undefined; anonymous: boolean }
  /** flagd's evaluation service for providers in RPC mode (docs/openfeature.md#rpc): off unless a port or socket is set. */
  evaluation: { port: number | undefined; host: string; socket: string | undefined; anonymous: boolean }
  import: {
    watchDir: string | undefined
    mode: 'merge' | 'replace'
    values: 'overwrite' | 'keep'
    /** The environment dropped files import into (docs/environments.md#migrations); absent: the default one. */
    environment: string | undefined
    settleMs: number
    rescanMs: number
    allowedHosts: string[]
    urlTimeoutMs: number
    urlMaxBytes: number
  }
}

/** One webhook (docs/api.md#webhooks): where to POST which audit entries, signed with `secret`. */
export interface WebhookConfig {
  /** Names the webhook in logs, metrics and its delivery cursor; the URL's host when not given (never the URL). */
  name: string
  url: string
  /** Action patterns: `*`, `flag.*`, `flag.updated`. */
  events: string[]
  secret: string
}

/** Converts a raw value to the key's type or returns a reason it cannot. */
type Parser = (raw: unknown) => { ok: true; value: unknown } | { ok: false; reason: string }

/** One configuration key. */
export interface KeySpec {
  path: string
  default: unknown
  parse: Parser
  doc: string
  /** Never echoed in errors (it holds a password or key). */
  sensitive?: boolean
}

const ok = (value: unknown) => ({ ok: true as const, value })
const bad = (reason: string) => ({ ok: false as const, reason })

function integer(min: number, max: number): Parser {
  return (raw) => {
    const n = typeof raw === 'string' && /^-?\d+$/.test(raw.trim()) ? Number(raw.trim()) : raw
    if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < min || n > max) {
      return bad(`must be a whole number from ${min} to ${max}`)
    }
    return ok(n)
  }
}

const boolean: Parser = (raw) => {
  if (typeof raw === 'boolean') return ok(raw)
  if (typeof raw === 'string' && /^(true|1|yes|on)$/i.test(raw.trim())) return ok(true)
  if (typeof raw === 'string' && /^(false|0|no|off)$/i.test(raw.trim())) return ok(false)
  return bad('must be true or false')
}

function text(min = 1, max = 4096, pattern?: RegExp, patternText?: string): Parser {
  return (raw) => {
    if (typeof raw !== 'string') return bad('must be a string')
    const len = [...raw].length
    if (len < min || len > max) return bad(`must be ${min}-${max} characters`)
    if (pattern && !pattern.test(raw)) return bad(patternText ?? `must match ${pattern}`)
    return ok(raw)
  }
}

/** A kind's lifetime in days (0–3650), or none: `null` (`null`, `none` or empty in the environment). */
const lifetimeDays: Parser = (raw) => {
  if (raw === null || (typeof raw === 'string' && /^(null|none|)$/i.test(raw.trim()))) return ok(null)
  const parsed = integer(0, 3650)(raw)
  return parsed.ok ? parsed : bad('must be a whole number of days from 0 to 3650, or null for none')
}

const optionalText: Parser = (raw) => (raw === undefined || raw === '' ? ok(undefined) : text()(raw))

const optionalPort: Parser = (raw) => (raw === undefined || raw === '' ? ok(undefined) : integer(0, 65535)(raw))

function oneOf(...values: string[]): Parser {
  return (raw) => (typeof raw === 'string' && values.includes(raw) ? ok(raw) : bad(`must be one of ${values.join(', ')}`))
}

const list: Parser = (raw) => {
  // `["a"]` in a variable would be read as the one entry `["a"]` (docs/configuration.md)
  if (typeof raw === 'string' && raw.trim().startsWith('[')) return bad('is comma-separated in the environment (a,b), not a JSON list')
  if (typeof raw === 'string')
    return ok(
      raw
        .split(',')
        .map((s) => s.trim())
        .filter((s) => s.length > 0),
    )
  if (Array.isArray(raw) && raw.every((s) => typeof s === 'string' && s.trim().length > 0)) return ok(raw.map((s: string) => s.trim()))
  return bad('must be a list of non-empty strings (comma-separated in the environment)')
}

/** A list of IP addresses or CIDR ranges (`10.0.0.1`, `10.0.0.0/8`, `::1`). */
const addressList: Parser = (raw) => {
  const parsed = list(raw)
  if (!parsed.ok) return parsed
  const bad = (parsed.value as string[]).find((entry) => !ipaddr.isValid(entry) && !ipaddr.isValidCIDR(entry))
  return bad === undefined ? parsed : { ok: false, reason: `has ${JSON.stringify(bad)}, which is neither an IP address nor a CIDR range` }
}

/** Browser origins allowed by CORS: `*`, or origins such as `https://app.example.com` (scheme, host, port; no path). */
const originList: Parser = (raw) => {
  const parsed = list(raw)
  if (!parsed.ok) return parsed
  const wrong = (parsed.value as string[]).find((o) => {
    if (o === '*') return false
    try {
      const url = new URL(o)
      return (url.protocol !== 'http:' && url.protocol !== 'https:') || url.origin !== o
    } catch {
      return true
    }
  })
  return wrong === undefined
    ? parsed
    : bad(`has ${JSON.stringify(wrong)}, which is not an origin: write "*" or scheme://host[:port], without a path or trailing slash`)
}

const EVENT_PATTERN = new RegExp(
  `^(\\*|(${Object.values(AUDIT_ENTITY).join('|')})\\.(\\*|created|updated|deleted)|flag\\.(archived|restored)|change-request\\.(approved|rejected|applied|cancelled|failed))$`,
)

/** `webhooks`: a list of `{url, events, secret, name?}` (JSON text in the environment). */
const webhookList: Parser = (raw) => {
  let value = raw
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw)
    } catch {
      return bad('must be a JSON array of {url, events, secret, name?}')
    }
  }
  if (!Array.isArray(value)) return bad('must be a list of {url, events, secret, name?}')
  const out: WebhookConfig[] = []
  for (const [i, w] of value.entries()) {
    const where = `entry ${i + 1}`
    if (typeof w !== 'object' || w === null) return bad(`${where} must be an object {url, events, secret, name?}`)
    const { url, events, secret, name, ...rest } = w as Record<string, unknown>
    const unknown = Object.keys(rest)[0]
    if (unknown !== undefined) return bad(`${where} has an unknown field "${unknown}" (known: url, events, secret, name)`)
    let parsed: URL | undefined
    try {
      parsed = typeof url === 'string' ? new URL(url) : undefined
    } catch {
      parsed = undefined
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:'))
      return bad(`${where} needs a url: an http:// or https:// address`)
    if (!Array.isArray(events) || events.length === 0 || !events.every((e) => typeof e === 'string' && EVENT_PATTERN.test(e))) {
      return bad(
        `${where} needs events: a non-empty list of "*", "<entity>.*" or "<entity>.created|updated|deleted" (and flag.archived|restored), entities ${Object.values(AUDIT_ENTITY).join(', ')}`,
      )
    }
    if (typeof secret !== 'string' || secret.length < 16)
      return bad(`${where} needs a secret of at least 16 characters (the receiver checks signatures with it)`)
    if (name !== undefined && (typeof name !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(name)))
      return bad(`${where} has a name that is not 1-64 of A-Z a-z 0-9 . _ -`)
    // the name labels metrics (public on /metrics) and log lines: never the URL, whose user info,
    // path or query may carry a secret (Slack-style hooks); without a name, the host stands for it
    const id = (name as string | undefined) ?? parsed.host
    if (out.some((o) => o.name === id)) {
      return bad(
        name === undefined
          ? `${where}: two webhooks go to ${id}; give each a name (name: "…") so they can be told apart`
          : `${where}: two webhooks are named ${JSON.stringify(id)}; give each a distinct name`,
      )
    }
    out.push({ name: id, url: url as string, events: events as string[], secret })
  }
  return ok(out)
}

const DURATION_UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400 }

/** Durations are whole seconds, or a number with a unit: `90s`, `30m`, `12h`, `7d`. */
const duration: Parser = (raw) => {
  const m = typeof raw === 'string' ? /^\s*(\d+)\s*([smhd]?)\s*$/.exec(raw) : null
  const seconds = typeof raw === 'number' ? raw : m ? Number(m[1]) * (DURATION_UNITS[m[2] || 's'] ?? 1) : Number.NaN
  if (!Number.isSafeInteger(seconds) || seconds < 60 || seconds > 366 * 86400) {
    return bad('must be a duration from 60 s to 366 d: whole seconds or a number with s, m, h or d (e.g. 12h)')
  }
  return ok(seconds)
}

const secret: Parser = (raw) => {
  if (raw === undefined || raw === '') return ok(undefined)
  if (typeof raw !== 'string' || raw.length < 32) return bad('must be a string of at least 32 characters')
  return ok(raw)
}

/** A PostgreSQL connection URL; the password inside it is never echoed. */
const postgresUrl: Parser = (raw) => {
  if (raw === undefined || raw === '') return ok(undefined)
  if (typeof raw !== 'string') return bad('must be a URL like postgres://flagd:password@db.example.com:5432/flagd')
  try {
    const url = new URL(raw)
    if (url.protocol !== 'postgres:' && url.protocol !== 'postgresql:') return bad('must start with postgres:// or postgresql://')
    if (!url.hostname && !url.searchParams.has('host')) return bad('must name a host')
  } catch {
    return bad('must be a URL like postgres://flagd:password@db.example.com:5432/flagd')
  }
  return ok(raw)
}

const MiB = 1024 * 1024

/** The table of keys, in the order docs/configuration.md documents them. */
export const CONFIG_KEYS: readonly KeySpec[] = [
  { path: 'host', default: '127.0.0.1', parse: text(1, 255), doc: 'Address to listen on.' },
  { path: 'port', default: 8080, parse: integer(0, 65535), doc: 'TCP port (0 picks a free one).' },
  { path: 'dataDir', default: './data', parse: text(1, 4096), doc: 'Directory holding the state file, secret, lock and backups.' },
  {
    path: 'storage.backend',
    default: undefined,
    parse: (raw) => (raw === undefined || raw === '' ? ok(undefined) : oneOf('file', 'postgres')(raw)),
    doc: 'file (the JSON file in dataDir) or postgres (replicas sharing storage.postgresUrl); postgres when a URL is set, else file.',
  },
  {
    path: 'storage.postgresUrl',
    default: undefined,
    parse: postgresUrl,
    sensitive: true,
    doc: 'postgres://user:password@host:5432/database for the postgres backend.',
  },
  {
    path: 'environment',
    default: DEFAULT_ENVIRONMENT,
    parse: (raw) => {
      const checked = text(1, 64, /^[A-Za-z0-9._-]+$/, 'may contain only A-Z a-z 0-9 . _ -')(raw)
      const why = checked.ok ? environmentNameProblem(raw) : undefined
      return why ? bad(why) : checked
    },
    doc: 'Name of this environment, written into exports.',
  },
  { path: 'publicExport', default: true, parse: boolean, doc: 'Serve GET /migration/export without a token.' },
  { path: 'trustProxy', default: [], parse: addressList, doc: 'Proxy addresses or CIDR ranges whose X-Forwarded-For is trusted.' },
  { path: 'logLevel', default: 'info', parse: oneOf('debug', 'info', 'warn', 'error'), doc: 'Least severe log level written.' },
  { path: 'metrics.enabled', default: true, parse: boolean, doc: 'Serve Prometheus metrics at GET /metrics.' },
  {
    path: 'metrics.perFlag',
    default: false,
    parse: boolean,
    doc: 'Add flagd_evaluations_total{flag, variant, reason} to the metrics (a series per flag and variant).',
  },
  {
    path: 'cors.origins',
    default: [],
    parse: originList,
    doc: 'Browser origins allowed to call the API and OFREP (CORS), and the evaluation port over Connect: "*" or https://app.example.com; none by default.',
  },
  {
    path: 'webhooks',
    default: [],
    parse: webhookList,
    // the value holds secrets (and URLs that may carry some): an error names the problem, never the value
    sensitive: true,
    doc: "Webhooks: [{url, events, secret, name?}] (JSON in FLAGD_WEBHOOKS); name defaults to the URL's host.",
  },
  {
    path: 'audit.retentionDays',
    default: 365,
    parse: integer(0, 36500),
    doc: 'Days the audit log keeps its entries (0: keep everything).',
  },
  { path: 'streams.heartbeatSeconds', default: 15, parse: integer(1, 15), doc: 'Seconds between keep-alive comments on event streams.' },
  { path: 'auth.tokenTtl', default: 12 * 3600, parse: duration, doc: 'Token and session lifetime (seconds, or 30m, 12h, 7d).' },
  {
    path: 'auth.secret',
    default: undefined,
    parse: secret,
    sensitive: true,
    doc: 'HS256 signing secret (≥ 32 chars); generated into dataDir when unset.',
  },
  {
    path: 'auth.loginMaxFailuresPerUser',
    default: 5,
    parse: integer(1, 1000),
    doc: 'Failed logins per username and client address allowed in the window.',
  },
  {
    path: 'auth.loginMaxFailuresPerUserTotal',
    default: 100,
    parse: integer(1, 100000),
    doc: 'Failed logins per username from all addresses together allowed in the window.',
  },
  { path: 'auth.loginUserWindowSeconds', default: 900, parse: integer(1, 86400), doc: 'Sliding window for both per-username counts.' },
  {
    path: 'auth.loginMaxFailuresPerAddress',
    default: 20,
    parse: integer(1, 100000),
    doc: 'Failed logins per client address allowed in the window.',
  },
  { path: 'auth.loginAddressWindowSeconds', default: 60, parse: integer(1, 86400), doc: 'Sliding window for the per-address count.' },
  {
    path: 'auth.oidc',
    default: undefined,
    parse: parseOidcConfig,
    sensitive: true,
    doc: 'Single sign-on for the web UI: {issuer, clientId, clientSecret, redirectUri?, scopes?, usernameClaim?, groupsClaim?, groupPermissions?, defaultPermissions?, label?} (JSON in FLAGD_AUTH_OIDC).',
  },
  { path: 'limits.bodyBytes', default: 1 * MiB, parse: integer(1024, 1024 * MiB), doc: 'Largest request body on every route but import.' },
  { path: 'limits.importBytes', default: 16 * MiB, parse: integer(1024, 1024 * MiB), doc: 'Largest body of PUT /api/migrations.' },
  {
    path: 'limits.cacheBytes',
    default: 64 * MiB,
    parse: integer(1 * MiB, 64 * 1024 * MiB),
    doc: 'Memory for answers kept from one request for the next (lists, bulk evaluations, credentials, sync documents); the least recently used go first.',
  },
  {
    path: 'limits.maxFlags',
    default: 100_000,
    parse: integer(1, 10_000_000),
    doc: 'Most flags the service holds; a create or import past it is refused (400).',
  },
  { path: 'usage.count', default: true, parse: boolean, doc: 'Count evaluations per flag and variant (GET /api/usage).' },
  {
    path: 'usage.staleDays',
    default: 30,
    parse: integer(1, 365),
    doc: 'A flag neither evaluated nor changed for this many days is stale.',
  },
  ...(
    [
      ['release', 40],
      ['experiment', 40],
      ['operational', 7],
      ['killSwitch', null],
      ['permission', null],
    ] as const
  ).map(([kind, days]) => ({
    path: `lifecycle.${kind}Days`,
    default: days,
    parse: lifetimeDays,
    doc: `Days a ${kind === 'killSwitch' ? 'kill-switch' : kind} flag is expected to live; past them it is potentially stale (0-3650, or null for never).`,
  })),
  {
    path: 'lifecycle.kill-switchDays',
    default: undefined,
    parse: lifetimeDays,
    doc: "lifecycle.killSwitchDays spelt with the kind's own name, as lifecycle.<kind>Days reads; wins when set.",
  },
  {
    path: 'sync.port',
    default: undefined,
    parse: optionalPort,
    doc: "TCP port of flagd's gRPC sync protocol for in-process providers (off when unset; 0 picks a free one).",
  },
  { path: 'sync.host', default: '127.0.0.1', parse: text(1, 255), doc: 'Address the sync protocol listens on.' },
  {
    path: 'sync.socket',
    default: undefined,
    parse: optionalText,
    doc: 'Unix socket path for the sync protocol (guarded by file permissions: no token needed on it).',
  },
  {
    path: 'sync.anonymous',
    default: false,
    parse: boolean,
    doc: 'Send flags over TCP sync without an API token (like publicExport).',
  },
  {
    path: 'evaluation.port',
    default: undefined,
    parse: optionalPort,
    doc: "TCP port of flagd's gRPC evaluation service for providers in RPC mode (off when unset; flagd's own is 8013).",
  },
  { path: 'evaluation.host', default: '127.0.0.1', parse: text(1, 255), doc: 'Address the evaluation service listens on.' },
  {
    path: 'evaluation.socket',
    default: undefined,
    parse: optionalText,
    doc: 'Unix socket path for the evaluation service (guarded by file permissions: no token needed on it).',
  },
  {
    path: 'evaluation.anonymous',
    default: false,
    parse: boolean,
    doc: 'Evaluate over TCP RPC without an API token, in the default environment.',
  },
  { path: 'import.watchDir', default: undefined, parse: optionalText, doc: 'Drop folder for migration files (default <dataDir>/import).' },
  { path: 'import.mode', default: 'merge', parse: oneOf('merge', 'replace'), doc: 'Import mode for dropped files.' },
  { path: 'import.values', default: 'overwrite', parse: oneOf('overwrite', 'keep'), doc: 'Value handling for dropped files.' },
  {
    path: 'import.environment',
    default: undefined,
    parse: optionalText,
    doc: "Environment dropped files import into, whatever the file's own environment says (default: the default environment).",
  },
  { path: 'import.settleMs', default: 1000, parse: integer(0, 600000), doc: 'A dropped file is read once unchanged this long.' },
  { path: 'import.rescanMs', default: 5000, parse: integer(100, 3600000), doc: 'Interval of the drop-folder rescan.' },
  { path: 'import.allowedHosts', default: [], parse: list, doc: 'Hosts, IPs or CIDRs that URL imports may reach even if not public.' },
  { path: 'import.urlTimeoutMs', default: 10000, parse: integer(100, 600000), doc: 'Total time allowed for a URL import.' },
  {
    path: 'import.urlMaxBytes',
    default: 16 * MiB,
    parse: integer(1024, 1024 * MiB),
    doc: 'Largest remote document (after decompression).',
  },
]

/** `import.allowedHosts` → `FLAGD_IMPORT_ALLOWED_HOSTS`. */
export function envName(path: string): string {
  return `FLAGD_${path
    .split('.')
    .map((part) => part.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase())
    .join('_')}`
}
