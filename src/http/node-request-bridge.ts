/**
 * HTTP/1.1 connections handed over by the evaluation port's front listener (docs/openfeature.md#connect),
 * parsed by Bun's `node:http` and answered by the one pipeline: each request becomes a fetch
 * `Request` (an `RpcPortRequest` with its peer), the pipeline's `Response` is written back with
 * backpressure, and a client that goes away aborts the request (a Connect event stream ends).
 * Requests that `accepts` refuses (anything but the Connect routes) get a plain 404 or 405, never a
 * page of Bun's; headers past 16 KiB and malformed requests a plain 400.
 */

import { once } from 'node:events'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { Socket } from 'node:net'
import { Readable } from 'node:stream'
import { RpcPortRequest } from './request-context.ts'

/** What the bridge answers with. */
export interface NodeBridgeOptions {
  /** True for a method and path the port serves (the Connect routes, and their CORS preflight). */
  accepts(method: string, path: string): boolean
  /** The one pipeline (`HttpApp.handle`). */
  answer(request: RpcPortRequest): Promise<Response>
  /** Whether the listener takes calls without a credential. */
  anonymousAllowed: boolean
  /** What a refused request is told the port speaks. */
  speaks: string
}

const plain = (res: ServerResponse, status: number, text: string, extra: Record<string, string> = {}) => {
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(text), ...extra })
  res.end(text)
}

/** A function that takes an HTTP/1.1 connection and serves it (see module comment). */
export function createNodeBridge(options: NodeBridgeOptions): (socket: Socket) => void {
  const server = createServer({ maxHeaderSize: 16 * 1024 }, (req, res) => {
    serve(req, res, options).catch(() => {
      if (!res.headersSent) plain(res, 500, 'internal error\n')
      else res.destroy()
    })
  })
  server.headersTimeout = 10_000
  server.keepAliveTimeout = 5_000
  server.on('clientError', (_err, socket: Socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
    else socket.destroy()
  })
  return (socket) => void server.emit('connection', socket)
}

async function serve(req: IncomingMessage, res: ServerResponse, options: NodeBridgeOptions): Promise<void> {
  const url = req.url ?? ''
  const method = req.method ?? ''
  const path = url.split('?', 1)[0] ?? ''
  if (!url.startsWith('/') || !options.accepts(method, path)) {
    const status = url.startsWith('/') && method !== 'POST' && method !== 'OPTIONS' ? 405 : 404
    return plain(
      res,
      status,
      `${method} ${path.slice(0, 200)} is no call here. ${options.speaks}\n`,
      status === 405 ? { allow: 'POST' } : {},
    )
  }
  const headers = new Headers()
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string)
  const aborted = new AbortController()
  res.once('close', () => aborted.abort())
  const hasBody = method === 'POST'
  const request = new Request(`http://localhost${url}`, {
    method,
    headers,
    signal: aborted.signal,
    ...(hasBody ? { body: Readable.toWeb(req) as ReadableStream<Uint8Array>, duplex: 'half' } : {}),
  } as RequestInit)
  const response = await options.answer(new RpcPortRequest(request, req.socket.remoteAddress ?? 'unix', options.anonymousAllowed))
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()))
  if (response.body === null) return void res.end()
  const reader = response.body.getReader()
  aborted.signal.addEventListener('abort', () => void reader.cancel().catch(() => {}))
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    if (!res.write(value) && !aborted.signal.aborted) await Promise.race([once(res, 'drain'), once(res, 'close')])
  }
  res.end()
}
