/**
 * The daemon's control socket: `<dataDir>/flagd.sock`, a unix socket with mode 0600 inside the 0700
 * data directory, so only the account that runs the daemon (or root) can use it. It carries
 * `AdminApi` calls as `POST /admin/<method>` with the arguments as a JSON array checked against the
 * protocol (`control-protocol.ts`), answered with `{result}` or `{error: {code, message, details}}`
 * (an `AppError` crosses the socket whole; the status only says which of the two it is). Both ends
 * send their protocol version and refuse the other's when it differs.
 */

import { chmodSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Server } from 'bun'
import { AppError, type ErrorCode } from '../domain/errors.ts'
import type { AdminApi } from '../services/admin-service.ts'
import { VERSION } from '../version.ts'
import {
  argumentProblem,
  CONTROL_METHODS,
  CONTROL_PROTOCOL,
  isControlMethod,
  mismatchMessage,
  PROTOCOL_HEADER,
  VERSION_HEADER,
} from './control-protocol.ts'

/** The socket's path inside a data directory. */
export function controlSocketPath(dataDir: string): string {
  return join(dataDir, 'flagd.sock')
}

const OUR_SIDE = { protocol: String(CONTROL_PROTOCOL), version: VERSION }
const HEADERS = { 'content-type': 'application/json', [PROTOCOL_HEADER]: OUR_SIDE.protocol, [VERSION_HEADER]: VERSION }

const answer = (body: unknown, status = 200) => new Response(JSON.stringify(body), { status, headers: HEADERS })
const refuse = (code: ErrorCode, message: string, details?: Record<string, unknown>) =>
  answer({ error: { code, message, ...(details === undefined ? {} : { details }) } }, code === 'INTERNAL' ? 500 : 400)

/** Serves `admin` on the data directory's control socket (the caller holds the directory lock). */
export function serveControlSocket(dataDir: string, admin: AdminApi, log: (line: string) => void): Server<undefined> {
  const path = controlSocketPath(dataDir)
  rmSync(path, { force: true }) // we hold the lock, so any socket file left here is stale
  const server = Bun.serve({
    unix: path,
    development: false,
    async fetch(request) {
      const cli = { protocol: request.headers.get(PROTOCOL_HEADER), version: request.headers.get(VERSION_HEADER) }
      if (cli.protocol !== OUR_SIDE.protocol) return refuse('CONFLICT', mismatchMessage(cli, OUR_SIDE))
      const method = new URL(request.url).pathname.replace(/^\/admin\//, '')
      if (request.method !== 'POST' || !isControlMethod(method)) return refuse('NOT_FOUND', `no admin operation ${method}`)
      let args: unknown
      try {
        args = await request.json()
      } catch {
        return refuse('INVALID_REQUEST', 'the arguments are not JSON')
      }
      const problem = argumentProblem(method, args)
      if (problem) return refuse('INVALID_REQUEST', `${method}: ${problem}`)
      try {
        const result = await (admin[method] as (...a: unknown[]) => Promise<unknown>)(...(args as unknown[]))
        log(`control socket: ${method} done`)
        return answer({ result })
      } catch (err) {
        if (err instanceof AppError) return refuse(err.code, err.message, err.details)
        log(`control socket: ${method} failed: ${(err as Error).message}`)
        return refuse('INTERNAL', 'the daemon could not carry out the command')
      }
    },
  })
  chmodSync(path, 0o600)
  return server
}

/** An `AdminApi` that forwards every call to a running daemon through its control socket. */
export function connectControlSocket(dataDir: string): AdminApi {
  const path = controlSocketPath(dataDir)
  const call = async (method: string, args: unknown[]) => {
    let response: Response
    try {
      response = await fetch(`http://flagd/admin/${method}`, {
        unix: path,
        method: 'POST',
        body: JSON.stringify(args),
        headers: { 'content-type': 'application/json', [PROTOCOL_HEADER]: OUR_SIDE.protocol, [VERSION_HEADER]: VERSION },
      })
    } catch {
      throw new Error(`the data directory is in use, but the daemon's control socket ${path} does not answer`)
    }
    const daemon = { protocol: response.headers.get(PROTOCOL_HEADER), version: response.headers.get(VERSION_HEADER) }
    // a daemon of an earlier release neither sends nor checks the version: refuse here instead
    if (daemon.protocol !== OUR_SIDE.protocol) throw new Error(mismatchMessage(OUR_SIDE, daemon))
    const body = (await response.json()) as {
      result?: unknown
      error?: { code: ErrorCode; message: string; details?: Record<string, unknown> }
    }
    if (body.error) throw new AppError(body.error.code, body.error.message, body.error.details)
    return body.result
  }
  const api = {} as Record<string, (...args: unknown[]) => Promise<unknown>>
  for (const method of CONTROL_METHODS) api[method] = (...args) => call(method, args)
  return api as unknown as AdminApi
}
