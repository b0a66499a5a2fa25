/**
 * Example flagd configuration. `flagd serve` loads `flagd.config.ts` from the working directory when
 * it exists (or the file given with `--config`). Environment variables (FLAGD_*) and command-line
 * flags override what is set here. Only type imports are allowed in this file: the compiled binary
 * loads it at run time without node_modules.
 *
 * Every key is optional; the values below are the defaults.
 */
import type { FlagdConfigFile } from './src/config.ts'

const config: FlagdConfigFile = {
  host: '127.0.0.1', // FLAGD_HOST
  port: 8080, // FLAGD_PORT
  dataDir: './data', // FLAGD_DATA_DIR, relative to the working directory
  storage: {
    // backend: 'postgres', // FLAGD_STORAGE_BACKEND: 'file' (default) or 'postgres' (replicas; the default when a URL is set)
    // postgresUrl: 'postgres://flagd:password@db.example.com:5432/flagd', // FLAGD_STORAGE_POSTGRES_URL (prefer the variable: it holds a password)
  },
  environment: 'development', // FLAGD_ENVIRONMENT, written into exports
  publicExport: true, // FLAGD_PUBLIC_EXPORT: serve GET /migration/export without a token
  trustProxy: [], // FLAGD_TRUST_PROXY: addresses or CIDR ranges of reverse proxies whose X-Forwarded-For is believed
  logLevel: 'info', // FLAGD_LOG_LEVEL
  metrics: { enabled: true }, // FLAGD_METRICS_ENABLED: serve GET /metrics
  cors: { origins: [] }, // FLAGD_CORS_ORIGINS: browser origins allowed to call the API, e.g. ['https://app.example.com'] or ['*']
  audit: { retentionDays: 365 }, // FLAGD_AUDIT_RETENTION_DAYS: entries older are pruned (0 keeps everything)
  streams: { heartbeatSeconds: 15 }, // FLAGD_STREAMS_HEARTBEAT_SECONDS: keep-alive comments on event streams (1-15)
  auth: {
    tokenTtl: '12h', // FLAGD_AUTH_TOKEN_TTL: seconds, or 30m / 12h / 7d
    // secret: '...at least 32 characters...', // FLAGD_AUTH_SECRET; generated into dataDir when unset
    loginMaxFailuresPerUser: 5, // per username and address: the 6th failure in the window is throttled (429)
    loginMaxFailuresPerUserTotal: 100, // per username from all addresses together
    loginUserWindowSeconds: 900,
    loginMaxFailuresPerAddress: 20,
    loginAddressWindowSeconds: 60,
  },
  limits: {
    bodyBytes: 1048576, // FLAGD_LIMITS_BODY_BYTES: 1 MiB on every route but import
    importBytes: 16777216, // FLAGD_LIMITS_IMPORT_BYTES: 16 MiB for PUT /api/migrations
    maxFlags: 100000, // FLAGD_LIMITS_MAX_FLAGS: most flags the service holds
  },
  sync: {
    // port: 8015, // FLAGD_SYNC_PORT: flagd's gRPC sync protocol for in-process OpenFeature providers (off when unset)
    host: '127.0.0.1', // FLAGD_SYNC_HOST
    // socket: './data/sync.sock', // FLAGD_SYNC_SOCKET: a unix socket instead of (or beside) the port; no token needed on it
    anonymous: false, // FLAGD_SYNC_ANONYMOUS: true sends flags over TCP without an API token
  },
  import: {
    // watchDir: './data/import', // FLAGD_IMPORT_WATCH_DIR (default <dataDir>/import)
    mode: 'merge', // merge | replace, for dropped files
    values: 'overwrite', // overwrite | keep, for dropped files
    settleMs: 1000, // a dropped file is read once unchanged this long
    rescanMs: 5000,
    allowedHosts: [], // FLAGD_IMPORT_ALLOWED_HOSTS: hosts, IPs or CIDRs URL imports may reach though not public
    urlTimeoutMs: 10000,
    urlMaxBytes: 16777216,
  },
}

export default config
