/**
 * The daemon's control socket: `<dataDir>/flagd.sock`, a unix socket with mode 0600 inside the 0700
 * data directory, so only the account that runs the daemon (or root) can use it. It carries
 * `AdminApi` calls as `POST /admin/<method>` with the arguments as a JSON array, answered with
 * `{result}` or the usual `{error}` envelope with the status the HTTP API would give (one table,
 * `http/error-handler.ts`).
 */

import { chmodSync, rmSync } from 'node:fs'
import { join } from 'node:path'
import type { Server } from 'bun'
import { AppError } from '../domain/errors.ts'
import { errorResponse } from '../http/error-handler.ts'
import { ADMIN_METHODS, type AdminApi } from '../services/admin-service.ts'

/** The socket's path inside a data directory. */
export function controlSocketPath(dataDir: string): string {
  return join(dataDir, 'flagd.sock')
}

/** Serves `admin` on the data directory's control socket (the caller holds the directory lock). */
export function serveControlSocket(dataDir: string, admin: AdminApi, log: (line: string) => void): Server<undefined> {
  const path = controlSocketPath(dataDir)
  rmSync(path, { force: true }) // we hold the lock, so any socket file left here is stale
  const server = Bun.serve({
    unix: path,
    development: false,
    async fetch(request) {
      const method = new URL(request.url).pathname.replace(/^\/admin\//, '')
      if (request.method !== 'POST' || !(ADMIN_METHODS as readonly string[]).includes(method)) {
        return errorResponse(new AppError('NOT_FOUND', `no admin operation ${method}`))
      }
      try {
        const args = (await request.json()) as unknown[]
        const result = await (admin[method as keyof AdminApi] as (...a: unknown[]) => Promise<unknown>)(...args)
        log(`control socket: ${method} done`)
        return Response.json({ result })
      } catch (err) {
        if (err instanceof AppError) return errorResponse(err)
        log(`control socket: ${method} failed: ${(err as Error).message}`)
        return errorResponse(new AppError('INTERNAL', 'the daemon could not carry out the command'))
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
        headers: { 'content-type': 'application/json' },
      })
    } catch {
      throw new Error(`the data directory is in use, but the daemon's control socket ${path} does not answer`)
    }
    const body = (await response.json()) as {
      result?: unknown
      error?: { code: string; message: string; details?: Record<string, unknown> }
    }
    if (body.error) throw new AppError(body.error.code as never, body.error.message, body.error.details)
    return body.result
  }
  const api = {} as Record<string, (...args: unknown[]) => Promise<unknown>>
  for (const method of ADMIN_METHODS) api[method] = (...args) => call(method, args)
  return api as unknown as AdminApi
}
