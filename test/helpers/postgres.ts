/**
 * A real PostgreSQL server for tests: Debian's `postgresql` binaries (`initdb`, `pg_ctl`), a cluster
 * in a temp directory listening on 127.0.0.1 only, run as an unprivileged user because PostgreSQL
 * refuses root (the package's `postgres` user, else one created for the tests). One server per test
 * file; each test takes a fresh database. In CI (TEST_REQUIRE_POSTGRES=1) missing binaries are a
 * failure, elsewhere the tests that need them skip.
 */

import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { SQL } from 'bun'
import { migrate } from '../../src/storage/postgres-schema.ts'
import { freePort } from './free-port.ts'

/** The directory of `initdb` and `pg_ctl`: on the PATH, else the newest under /usr/lib/postgresql. */
export function findPostgresBin(): string | null {
  const onPath = Bun.which('initdb')
  if (onPath && Bun.which('pg_ctl')) return dirname(onPath)
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(join(root, v, 'bin/initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : []
  const found = versions[0] ? join(root, versions[0], 'bin') : null
  if (!found && process.env.TEST_REQUIRE_POSTGRES === '1') throw new Error('no PostgreSQL binaries: install Debian\'s package "postgresql"')
  return found
}

/** A running test server. */
export interface PostgresServer {
  port: number
  /** A connection URL for `database`. */
  url(database: string): string
  /**
   * Creates a database with a fresh name and answers its URL: empty, or with `migrated` a copy of
   * one that holds flagd's tables already (made once per server), for tests whose subject is not
   * creating the schema: copying a template is a fraction of creating the tables anew.
   */
  freshDatabase(options?: { migrated?: boolean }): Promise<string>
  /** Stops the server (fast shutdown), as an outage would. */
  stop(): Promise<void>
  /** Starts it again on the same port and data. */
  start(): Promise<void>
  /** Freezes every server process (SIGSTOP): connections stay open and nothing answers, as in a network partition. */
  freeze(): void
  /** Lets a frozen server go on (SIGCONT). */
  thaw(): void
  /** Stops it for good and removes its files. */
  destroy(): Promise<void>
}

const SUPERUSER = 'flagd'
let created = 0

// the last safety net, as for daemons: a test process that ends (even by a crash) leaves no server behind
const running = new Set<() => void>()
process.on('exit', () => {
  for (const stop of running) stop()
})

/** The user the server runs as: root may not run PostgreSQL. */
function serverUser(): string | null {
  if (process.getuid?.() !== 0) return null
  const hasUser = (name: string) => Bun.spawnSync(['id', '-u', name]).exitCode === 0
  if (hasUser('postgres')) return 'postgres'
  if (!hasUser('flagd-test')) Bun.spawnSync(['useradd', '--system', '--no-create-home', 'flagd-test'])
  return 'flagd-test'
}

function run(user: string | null, command: string[]): void {
  const argv = user ? ['runuser', '-u', user, '--', ...command] : command
  const out = Bun.spawnSync(argv, { stdout: 'pipe', stderr: 'pipe' })
  if (out.exitCode !== 0) throw new Error(`${command.join(' ')} failed: ${out.stderr.toString()}${out.stdout.toString()}`)
}

/** Sends `signal` to the postmaster and every process it started. */
function signalServer(data: string, signal: 'STOP' | 'CONT'): void {
  const pid = readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]?.trim()
  if (!pid) throw new Error('no postmaster.pid: is the server running?')
  const children = Bun.spawnSync(['pgrep', '-P', pid]).stdout.toString().split('\n').filter(Boolean)
  for (const p of [pid, ...children]) Bun.spawnSync(['kill', `-${signal}`, p])
}

const INITDB_OPTIONS = ['-U', SUPERUSER, '-A', 'trust', '--no-sync', '-E', 'UTF8', '--locale=C']

/**
 * A cluster fresh from `initdb` for `bin`, made once per machine, user and options and copied for
 * each server: `initdb` costs about a second of CPU, a copy a tenth of that. It is made aside and
 * renamed into place, so a test process never sees one half made; of two made at once, one stays.
 */
function initializedCluster(user: string | null, bin: string): string {
  const key = Bun.hash(JSON.stringify([bin, INITDB_OPTIONS, user, process.getuid?.()])).toString(16)
  const cluster = join(tmpdir(), `flagd-test-initdb-${key}`)
  if (existsSync(join(cluster, 'PG_VERSION'))) return cluster
  const scratch = mkdtempSync(join(tmpdir(), 'flagd-pg-initdb-'))
  try {
    if (user) chownSync(scratch, ...ids(user))
    run(user, [join(bin, 'initdb'), '-D', join(scratch, 'data'), ...INITDB_OPTIONS])
    try {
      renameSync(join(scratch, 'data'), cluster)
    } catch {
      // another test process put its own there first: the same thing
    }
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
  return cluster
}

/** The uid and gid of `user`. */
function ids(user: string): [number, number] {
  const id = (flag: string) => Number(Bun.spawnSync(['id', flag, user]).stdout.toString().trim())
  return [id('-u'), id('-g')]
}

/** Starts a server in a temp directory (see module comment). */
export async function startPostgres(bin: string): Promise<PostgresServer> {
  const user = serverUser()
  const dir = mkdtempSync(join(tmpdir(), 'flagd-pg-'))
  chmodSync(dir, 0o700)
  if (user) chownSync(dir, ...ids(user))
  const data = join(dir, 'data')
  const port = freePort()
  run(user, ['cp', '-a', initializedCluster(user, bin), data])
  // a throwaway cluster: no flush to disk (fsync, full-page images) — a crash of the server process loses
  // nothing (the WAL is written to the kernel before a commit answers), only a crash of the machine would
  const durability = '-c fsync=off -c full_page_writes=off'
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200 -c shared_buffers=32MB ${durability}`
  const pgCtl = (...args: string[]) => run(user, [join(bin, 'pg_ctl'), '-D', data, ...args])
  const start = async () => pgCtl('start', '-w', '-t', '30', '-l', join(dir, 'server.log'), '-o', options)
  await start()
  const stopNow = () => {
    try {
      pgCtl('stop', '-m', 'immediate', '-w')
    } catch {
      // already stopped
    }
  }
  running.add(stopNow)
  const url = (database: string) => `postgres://${SUPERUSER}@127.0.0.1:${port}/${database}`
  // one connection for every CREATE DATABASE of this server: on this VM a connection costs the server
  // about 0.3 s of CPU (a fork and a backend's start and exit), three times the copy of a database
  let admin: SQL | undefined
  const closeAdmin = async () => {
    const open = admin
    admin = undefined
    await open?.close().catch(() => {})
  }
  const create = async (name: string, template?: string) => {
    admin ??= new SQL({ url: url('postgres'), max: 1 })
    await admin.unsafe(`CREATE DATABASE ${name}${template ? ` TEMPLATE ${template} STRATEGY FILE_COPY` : ''}`)
    return name
  }
  let template: Promise<string> | undefined
  const migratedTemplate = () =>
    (template ??= (async () => {
      const name = await create(`flagd_${process.pid}_template`)
      const sql = new SQL(url(name))
      try {
        await migrate(sql)
      } finally {
        await sql.close()
      }
      return name
    })())
  return {
    port,
    url,
    async freshDatabase(options = {}) {
      const from = options.migrated ? await migratedTemplate() : undefined
      return url(await create(`flagd_${process.pid}_${++created}`, from))
    },
    async stop() {
      await closeAdmin()
      pgCtl('stop', '-m', 'fast', '-w')
    },
    start,
    freeze: () => signalServer(data, 'STOP'),
    thaw: () => signalServer(data, 'CONT'),
    async destroy() {
      await closeAdmin()
      running.delete(stopNow)
      stopNow()
      rmSync(dir, { recursive: true, force: true })
    },
  }
}
