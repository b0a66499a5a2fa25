/**
 * loadConfig(): defaults < flagd.config.ts or flagd.config.json (or --config) < FLAGD_* environment <
 * command-line flags. Every value is checked against `CONFIG_KEYS`; the first bad one stops start-up
 * with a message naming the key and where the value came from. The result is frozen.
 *
 * A JSON file holds the same object a `flagd.config.ts` default-exports. It exists for lean hosts:
 * loading TypeScript pages Bun's transpiler into the process (resident memory that stays,
 * docs/performance.md#what-start-up-does-not-load), parsing JSON does not.
 */

import { existsSync } from 'node:fs'
import { stat } from 'node:fs/promises'
import { isAbsolute, resolve } from 'node:path'
import { pathToFileURL } from 'node:url'
import { CONFIG_KEYS, type Config, envName } from './config-schema.ts'
import { deepFreeze } from './domain/deep-freeze.ts'

export type { Config, WebhookConfig } from './config-schema.ts'

import type { WebhookConfig } from './config-schema.ts'
import { closestSpelling } from './domain/spelling-suggestion.ts'

type DeepPartial<T> = { [K in keyof T]?: T[K] extends readonly unknown[] ? T[K] : T[K] extends object ? DeepPartial<T[K]> : T[K] }

/** What a `flagd.config.ts` default-exports (use `import type { FlagdConfigFile }`). */
export type FlagdConfigFile = Omit<DeepPartial<Config>, 'auth' | 'webhooks'> & {
  /** name is optional here: the URL names a webhook without one. */
  webhooks?: (Omit<WebhookConfig, 'name'> & { name?: string })[]
  auth?: Omit<DeepPartial<Config['auth']>, 'tokenTtl'> & { tokenTtl?: number | string }
}

/** A configuration value is wrong; the message names the key and its source. */
export class ConfigError extends Error {
  constructor(
    message: string,
    /** True when the bad value came from a command-line flag (a usage error). */
    readonly fromCommandLine = false,
  ) {
    super(message)
    this.name = 'ConfigError'
  }
}

/** Inputs of `loadConfig`; command-line values are the strings citty hands over. */
export interface LoadConfigOptions {
  configPath?: string | undefined
  cwd?: string
  env?: Record<string, string | undefined>
  flags?: { host?: string | undefined; port?: string | undefined; dataDir?: string | undefined }
  /** Where warnings go (an unknown FLAGD_* variable); stderr by default. */
  warn?: (message: string) => void
}

/** Variables flagd reads that are not configuration keys. */
const OTHER_VARIABLES = new Set(['FLAGD_ADMIN_USERNAME', 'FLAGD_ADMIN_PASSWORD'])

/**
 * The variables of OpenFeature's flagd providers (the JavaScript, Go, Java and Python providers read
 * these): an application's environment often holds them beside the daemon's, and they configure the
 * provider, not this daemon. They are known and ignored without a word, so no warning steers one of
 * them (a token in FLAGD_SOURCE_SELECTOR) into a daemon setting. FLAGD_HOST, FLAGD_PORT and
 * FLAGD_SYNC_PORT are this daemon's own settings too.
 */
const PROVIDER_VARIABLES = new Set([
  'FLAGD_CACHE',
  'FLAGD_DEADLINE_MS',
  'FLAGD_DEFAULT_AUTHORITY',
  'FLAGD_FATAL_STATUS_CODES',
  'FLAGD_KEEP_ALIVE_TIME_MS',
  'FLAGD_MAX_CACHE_SIZE',
  'FLAGD_MAX_EVENT_STREAM_RETRIES',
  'FLAGD_OFFLINE_FLAG_SOURCE_PATH',
  'FLAGD_OFFLINE_POLL_MS',
  'FLAGD_PROVIDER_ID',
  'FLAGD_RESOLVER',
  'FLAGD_RETRY_BACKOFF_MAX_MS',
  'FLAGD_RETRY_BACKOFF_MS',
  'FLAGD_RETRY_GRACE_PERIOD',
  'FLAGD_SELECTOR_HEADER',
  'FLAGD_SERVER_CERT_PATH',
  'FLAGD_SOCKET_PATH',
  'FLAGD_SOURCE_SELECTOR',
  'FLAGD_STREAM_DEADLINE_MS',
  'FLAGD_TARGET_URI',
  'FLAGD_TLS',
])

/** Warnings for FLAGD_* variables that configure nothing (a typo such as FLAGD_PROT must not pass silently). */
export function unknownVariables(env: Record<string, string | undefined>): string[] {
  const known = [...CONFIG_KEYS.map((k) => envName(k.path)), ...OTHER_VARIABLES, ...PROVIDER_VARIABLES]
  return Object.keys(env)
    .filter((name) => name.startsWith('FLAGD_') && !known.includes(name))
    .sort()
    .map((name) => {
      const closest = closestSpelling(name, known, { anyDistance: true })
      return `environment variable ${name} is not a flagd setting and is ignored${closest === undefined ? '' : `; did you mean ${closest}?`}`
    })
}

/** The config files looked for in the working directory when `--config` is not given; at most one may be there. */
export const DEFAULT_CONFIG_FILES = ['flagd.config.ts', 'flagd.config.json'] as const

function flatten(obj: Record<string, unknown>, prefix = '', out: Map<string, unknown> = new Map()): Map<string, unknown> {
  for (const [key, value] of Object.entries(obj)) {
    const path = prefix ? `${prefix}.${key}` : key
    const isGroup = CONFIG_KEYS.some((k) => k.path.startsWith(`${path}.`))
    if (isGroup && typeof value === 'object' && value !== null && !Array.isArray(value)) {
      flatten(value as Record<string, unknown>, path, out)
    } else {
      out.set(path, value)
    }
  }
  return out
}

/** The object a config file holds: a `.json` file's contents, or what any other file (TypeScript) default-exports. */
async function configObject(path: string): Promise<unknown> {
  // a FIFO or a device would block start-up on the read: only a regular file is opened (symlinks to one are fine)
  let kind: Awaited<ReturnType<typeof stat>>
  try {
    kind = await stat(path)
  } catch (err) {
    throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`)
  }
  if (!kind.isFile())
    throw new ConfigError(
      `config file ${path} is not a regular file (${kind.isDirectory() ? 'a directory' : 'a FIFO, socket or device'}); point --config at a file`,
    )
  if (path.endsWith('.json')) {
    let text: string
    try {
      text = await Bun.file(path).text()
    } catch (err) {
      throw new ConfigError(`cannot read config file ${path}: ${(err as Error).message}`)
    }
    try {
      return JSON.parse(text)
    } catch (err) {
      throw new ConfigError(`config file ${path} is not valid JSON: ${(err as Error).message}`)
    }
  }
  try {
    return ((await import(pathToFileURL(path).href)) as { default?: unknown }).default
  } catch (err) {
    throw new ConfigError(`cannot load config file ${path}: ${(err as Error).message}`)
  }
}

async function readConfigFile(path: string): Promise<Map<string, unknown>> {
  const value = await configObject(path)
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigError(`config file ${path} must ${path.endsWith('.json') ? 'hold a JSON object' : 'default-export an object'}`)
  }
  const entries = flatten(value as Record<string, unknown>)
  for (const key of entries.keys()) {
    if (!CONFIG_KEYS.some((k) => k.path === key)) {
      const closest = closestSpelling(
        key,
        CONFIG_KEYS.map((k) => k.path),
        { anyDistance: true },
      )
      throw new ConfigError(`unknown configuration key "${key}" in ${path}${closest === undefined ? '' : `; did you mean "${closest}"?`}`)
    }
  }
  return entries
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const parts = path.split('.')
  let node = target
  for (const part of parts.slice(0, -1)) node = (node[part] ??= {}) as Record<string, unknown>
  node[parts[parts.length - 1] as string] = value
}

/** Resolves the configuration (see module comment); throws `ConfigError` on a bad value. */
export async function loadConfig(options: LoadConfigOptions = {}): Promise<Config> {
  const cwd = options.cwd ?? process.cwd()
  const env = options.env ?? process.env
  const warn = options.warn ?? ((message: string) => console.error(`flagd: warning: ${message}`))
  for (const message of unknownVariables(env)) warn(message)
  let fileValues = new Map<string, unknown>()
  let fileName: string = DEFAULT_CONFIG_FILES[0]
  if (options.configPath !== undefined) {
    const path = isAbsolute(options.configPath) ? options.configPath : resolve(cwd, options.configPath)
    if (!existsSync(path)) throw new ConfigError(`config file ${path} does not exist`)
    fileValues = await readConfigFile(path)
    fileName = path
  } else {
    const found = DEFAULT_CONFIG_FILES.filter((name) => existsSync(resolve(cwd, name)))
    if (found.length > 1) throw new ConfigError(`both ${found.join(' and ')} are in ${cwd}: keep one, or name the one to use with --config`)
    if (found[0] !== undefined) {
      fileName = found[0]
      fileValues = await readConfigFile(resolve(cwd, fileName))
    }
  }
  const flagValues = new Map<string, unknown>()
  if (options.flags?.host !== undefined) flagValues.set('host', options.flags.host)
  if (options.flags?.port !== undefined) flagValues.set('port', options.flags.port)
  if (options.flags?.dataDir !== undefined) flagValues.set('dataDir', options.flags.dataDir)

  const result: Record<string, unknown> = {}
  for (const spec of CONFIG_KEYS) {
    let value: unknown = spec.default
    let source = 'default'
    if (fileValues.has(spec.path)) [value, source] = [fileValues.get(spec.path), fileName]
    const fromEnv = env[envName(spec.path)]
    if (fromEnv !== undefined) [value, source] = [fromEnv, `environment variable ${envName(spec.path)}`]
    if (flagValues.has(spec.path)) [value, source] = [flagValues.get(spec.path), 'command line']
    if (value === undefined && spec.default === undefined) {
      setPath(result, spec.path, undefined)
      continue
    }
    const parsed = spec.parse(value)
    if (!parsed.ok) {
      const got = spec.sensitive ? `from ${source}` : `got ${JSON.stringify(value)} from ${source}`
      throw new ConfigError(`invalid configuration: ${spec.path} ${parsed.reason} (${got})`, source === 'command line')
    }
    setPath(result, spec.path, parsed.value)
  }
  const config = result as unknown as Config
  config.dataDir = resolve(cwd, config.dataDir)
  if (config.import.watchDir !== undefined) config.import.watchDir = resolve(cwd, config.import.watchDir)
  config.storage.backend ??= config.storage.postgresUrl ? 'postgres' : 'file'
  if (config.storage.backend === 'postgres' && !config.storage.postgresUrl) {
    throw new ConfigError(
      'invalid configuration: storage.backend is postgres but storage.postgresUrl (FLAGD_STORAGE_POSTGRES_URL) is not set',
    )
  }
  return deepFreeze(config)
}
