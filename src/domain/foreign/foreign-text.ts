/**
 * Reading a file of another tool as text (docs/migrations.md#from-other-tools): JSON, YAML or TOML,
 * with the bounds every document from outside has (docs/api.md#conventions): valid UTF-8, nesting
 * at most `MAX_JSON_DEPTH` levels, no `__proto__`, `constructor` or `prototype` key, and no more
 * values than the text has bytes (YAML's aliases cannot blow a small file up into a large one).
 */

import { MAX_JSON_DEPTH, readBoundedJson } from '../bounded-json.ts'
import { forbiddenKeys } from '../json-object.ts'

/** The syntaxes a file of another tool may be written in. */
export type ForeignSyntax = 'json' | 'yaml' | 'toml'

/** A parsed file, or why it could not be read (a sentence naming the syntax). */
export type ForeignReading = { ok: true; value: unknown } | { ok: false; reason: string }

/** The keys `forbiddenKeys` reports. */
const FORBIDDEN = new Set(['__proto__', 'constructor', 'prototype'])

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

/** The syntax a media type names (`application/yaml`, `text/yaml`, `application/toml`, JSON), or `undefined`. */
export function syntaxOfMediaType(contentType: string | null): ForeignSyntax | undefined {
  const type = contentType?.split(';', 1)[0]?.trim().toLowerCase()
  if (type === 'application/json') return 'json'
  if (type === 'application/yaml' || type === 'text/yaml' || type === 'application/x-yaml') return 'yaml'
  if (type === 'application/toml') return 'toml'
  return undefined
}

/** The syntax a file name says (`.json`, `.yaml`, `.yml`, `.toml`), or `undefined`. */
export function syntaxOfFileName(name: string): ForeignSyntax | undefined {
  const lower = name.toLowerCase()
  if (lower.endsWith('.json')) return 'json'
  if (lower.endsWith('.yaml') || lower.endsWith('.yml')) return 'yaml'
  if (lower.endsWith('.toml')) return 'toml'
  return undefined
}

/** The problem with a parsed value: nested too deep, more values than `budget`, or a forbidden key. */
function shapeProblem(value: unknown, budget: number): string | undefined {
  let left = budget
  let forbidden = false
  // one walk counts the values, measures the depth and looks for forbidden keys; the path of one
  // found is spelt out by a second walk only then (docs/performance.md#third-round-2026-12-07)
  const values: unknown[] = [value]
  const depths: number[] = [0]
  while (values.length > 0) {
    const v = values.pop()
    const depth = depths.pop() as number
    if (--left < 0) return 'it holds more values than its size allows (aliases repeated too often)'
    if (typeof v !== 'object' || v === null) continue
    if (depth + 1 > MAX_JSON_DEPTH) return `it is nested deeper than ${MAX_JSON_DEPTH} levels`
    if (Array.isArray(v))
      for (let i = 0; i < v.length; i++) {
        values.push(v[i])
        depths.push(depth + 1)
      }
    else
      for (const key of Object.keys(v)) {
        forbidden ||= FORBIDDEN.has(key)
        values.push((v as Record<string, unknown>)[key])
        depths.push(depth + 1)
      }
  }
  return forbidden ? `the key ${forbiddenKeys(value)[0]} is not allowed` : undefined
}

/** Reads `bytes` written in `syntax` (see module comment). */
export function readForeignText(bytes: Uint8Array, syntax: ForeignSyntax): ForeignReading {
  const name = syntax.toUpperCase()
  if (syntax === 'json') {
    const read = readBoundedJson(bytes)
    if (!read.ok) {
      const why = {
        'too-deep': `nested deeper than ${MAX_JSON_DEPTH} levels`,
        'not-utf8': 'not valid UTF-8',
        empty: 'empty',
        'not-json': 'not valid JSON',
      }
      return { ok: false, reason: why[read.problem] }
    }
    const problem = shapeProblem(read.value, Number.POSITIVE_INFINITY)
    return problem === undefined ? { ok: true, value: read.value } : { ok: false, reason: `not accepted: ${problem}` }
  }
  let text: string
  try {
    text = utf8.decode(bytes)
  } catch {
    return { ok: false, reason: 'not valid UTF-8' }
  }
  if (text.trim() === '') return { ok: false, reason: 'empty' }
  let value: unknown
  try {
    value = syntax === 'yaml' ? Bun.YAML.parse(text) : Bun.TOML.parse(text)
  } catch (err) {
    // Bun's parsers say what is wrong but not where (their line and column are the caller's)
    const message = (err as Error).message.replace(/^(YAML|TOML) Parse error: /u, '')
    return { ok: false, reason: `not valid ${name}: ${message}` }
  }
  const problem = shapeProblem(value, bytes.length + 16)
  return problem === undefined ? { ok: true, value } : { ok: false, reason: `not accepted: ${problem}` }
}
