/**
 * Fetching a migration document from a URL without handing a user's URL to fetch unguarded (Bun's
 * fetch reads file: and data: URLs, follows redirects and decompresses by default). Only http(s);
 * the host is resolved here and every address checked; the connection goes to the checked address
 * (so DNS rebinding cannot swap it) with TLS still verified against the host name; each redirect hop
 * is checked again; one deadline covers everything; the body is cut at the limit after
 * decompression. The remote body is never echoed in an error.
 */

import { lookup } from 'node:dns/promises'
import { isIP } from 'node:net'
import { MAX_JSON_DEPTH, readBoundedJson } from '../domain/bounded-json.ts'
import { AppError, InvalidError } from '../domain/errors.ts'
import { readForeignText, syntaxOfFileName, syntaxOfMediaType } from '../domain/foreign/foreign-text.ts'
import { readLimited } from '../io/read-limited.ts'
import { bareHost, isAllowedHost, nonPublicRange } from './address-policy.ts'

/** Limits and policy of remote fetches. */
export interface RemoteFetchOptions {
  allowedHosts: readonly string[]
  timeoutMs: number
  maxBytes: number
  maxRedirects?: number
  /** Name resolution; tests substitute their own. */
  resolve?: (host: string) => Promise<string[]>
}

const REDIRECTS = new Set([301, 302, 303, 307, 308])
const upstream = (message: string) => new AppError('UPSTREAM_ERROR', message)
const refused = (reason: string) => new InvalidError(`url refused: ${reason}`, 'url', reason)

async function systemResolve(host: string): Promise<string[]> {
  return (await lookup(host, { all: true, verbatim: true })).map((a) => a.address)
}

function parseUrl(text: string, base?: URL): URL {
  try {
    return base ? new URL(text, base) : new URL(text)
  } catch {
    throw refused('not a valid absolute URL')
  }
}

/** Checks one hop and returns the address to connect to. */
async function checkHop(url: URL, options: RemoteFetchOptions): Promise<string> {
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw refused(`scheme ${url.protocol.replace(':', '')} is not allowed; use http or https`)
  if (url.username !== '' || url.password !== '') throw refused('user information in the URL is not allowed')
  const host = bareHost(url.hostname)
  const allowed = isAllowedHost(host, options.allowedHosts)
  let addresses: string[]
  if (isIP(host)) addresses = [host]
  else {
    try {
      addresses = await (options.resolve ?? systemResolve)(host)
    } catch {
      throw upstream(`could not resolve ${host}`)
    }
    if (addresses.length === 0) throw upstream(`could not resolve ${host}`)
  }
  if (!allowed) {
    for (const address of addresses) {
      const range = nonPublicRange(address)
      if (range)
        throw refused(`${host} is a ${range} address${address === host ? '' : ` (${address})`}; list it in import.allowedHosts to allow it`)
    }
  }
  return addresses[0] as string
}

/**
 * Fetches and parses the JSON document at `url` (see module comment); with `text`, a YAML or TOML
 * one too, by its Content-Type or its path's ending (docs/migrations.md#from-other-tools).
 */
export async function fetchRemoteDocument(url: string, options: RemoteFetchOptions, text = false): Promise<unknown> {
  const signal = AbortSignal.timeout(options.timeoutMs)
  const maxRedirects = options.maxRedirects ?? 3
  let current = parseUrl(url)
  try {
    for (let hop = 0; ; hop++) {
      const address = await checkHop(current, options)
      const target = new URL(current.href)
      target.hostname = isIP(address) === 6 ? `[${address}]` : address
      const response = await fetch(target, {
        redirect: 'manual',
        signal,
        decompress: true,
        headers: {
          host: current.host,
          accept: text ? 'application/json, application/yaml, text/yaml, application/toml' : 'application/json',
        },
        tls: { serverName: bareHost(current.hostname) },
      })
      if (REDIRECTS.has(response.status)) {
        await response.body?.cancel().catch(() => {})
        const location = response.headers.get('location')
        if (!location) throw upstream(`the remote answered ${response.status} without a Location`)
        if (hop >= maxRedirects) throw upstream(`more than ${maxRedirects} redirects`)
        current = parseUrl(location, current)
        continue
      }
      if (response.status !== 200) {
        await response.body?.cancel().catch(() => {})
        throw upstream(`the remote answered ${response.status}, expected 200`)
      }
      const bytes = await readLimited(response.body, options.maxBytes, () =>
        upstream(`the remote document is larger than ${options.maxBytes} bytes`),
      )
      const syntax = text ? (syntaxOfMediaType(response.headers.get('content-type')) ?? syntaxOfFileName(current.pathname)) : undefined
      if (syntax === 'yaml' || syntax === 'toml') {
        const read = readForeignText(bytes, syntax)
        if (read.ok) return read.value
        throw new InvalidError(`the document at url is ${read.reason}`, 'url', read.reason)
      }
      // a valid JSON document nested too deep is the document's fault, as any invalid document (docs/migrations.md)
      const read = readBoundedJson(bytes)
      if (read.ok) return read.value
      if (read.problem === 'too-deep')
        throw new InvalidError(
          `the document at url is nested deeper than ${MAX_JSON_DEPTH} levels`,
          'url',
          `nested deeper than ${MAX_JSON_DEPTH} levels`,
        )
      // a YAML or TOML file without the format that reads it is the caller's to fix (docs/migrations.md#from-other-tools)
      const named = syntaxOfMediaType(response.headers.get('content-type')) ?? syntaxOfFileName(current.pathname)
      if (!text && (named === 'yaml' || named === 'toml')) {
        const reason = `a ${named.toUpperCase()} document, read only with format=flipt or format=gofeatureflag`
        throw new InvalidError(`the document at url is ${reason}`, 'url', reason)
      }
      throw upstream('the remote document is not valid JSON')
    }
  } catch (err) {
    if (err instanceof AppError) throw err
    if (signal.aborted) throw upstream(`the remote did not answer within ${options.timeoutMs} ms`)
    throw upstream('the remote could not be reached')
  }
}
