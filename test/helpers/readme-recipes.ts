/**
 * Reading the README's recipes (docs/development.md#readme-recipes): the shell blocks marked
 * `<!-- recipe -->`, the curl calls in them in the order they run, and what the comment after each
 * call promises (`# 409 CHANGE_REQUEST_REQUIRED`, `# 200 value: true, reason: TARGETING_MATCH`).
 */

/** One curl call of the recipes and what it should answer. */
export interface PromisedOutcome {
  /** The line the call is on (for messages). */
  command: string
  /** The status promised, or null: any 2xx. */
  status: number | null
  /** `path: value` pairs the JSON answer must hold (`changes.0.diff.value.after: true`). */
  fields: [string, string][]
  /** Error codes (UPPER_SNAKE words) the answer must contain. */
  codes: string[]
}

const MARK = /<!-- recipe -->\s*\n```(?:sh|bash)\n([\s\S]*?)\n```/g

/** The marked shell blocks of a Markdown text, in order. */
export function recipesOf(markdown: string): string[] {
  return [...markdown.matchAll(MARK)].map((m) => m[1] as string)
}

const CURL = /(^|[\s;(|&])curl\s/g
const PROMISE = /#\s*(\d{3})\b(.*)$/

/** Every curl call in `script`, in textual order (which is the order a script without loops runs them), with its promise. */
export function expectedCalls(script: string): PromisedOutcome[] {
  const calls: PromisedOutcome[] = []
  for (const line of script.split('\n')) {
    if (line.trimStart().startsWith('#')) continue
    const hash = line.search(/\s#\s/)
    const code = hash === -1 ? line : line.slice(0, hash)
    for (const _ of code.matchAll(CURL)) calls.push({ command: line.trim(), status: null, fields: [], codes: [] })
    const promise = hash === -1 ? null : line.slice(hash).match(PROMISE)
    const last = calls.at(-1)
    if (!promise || !last) continue
    last.status = Number(promise[1])
    for (const piece of (promise[2] ?? '').split(',').map((x) => x.trim())) {
      const pair = piece.match(/^([\w.]+):\s*(.+)$/)
      if (pair) last.fields.push([pair[1] as string, pair[2] as string])
      else if (/^[A-Z][A-Z_]+$/.test(piece)) last.codes.push(piece)
    }
  }
  return calls
}

/** The value at a dotted path (`changes.0.diff`) of a JSON value. */
function at(value: unknown, path: string): unknown {
  return path
    .split('.')
    .reduce<unknown>((v, k) => (v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), value)
}

/** What an answer lacks of its promise, or null when it keeps it. */
export function unmet(want: PromisedOutcome, status: number, body: string): string | null {
  if (want.status === null ? status < 200 || status > 299 : status !== want.status)
    return `answered ${status} (${want.status ?? '2xx'} promised): ${body.slice(0, 300)}`
  for (const code of want.codes) if (!body.includes(code)) return `the answer lacks ${code}: ${body.slice(0, 300)}`
  if (want.fields.length === 0) return null
  let json: unknown
  try {
    json = JSON.parse(body)
  } catch {
    return `not JSON: ${body.slice(0, 300)}`
  }
  for (const [path, text] of want.fields) {
    const got = at(json, path)
    const expected = (() => {
      try {
        return JSON.parse(text)
      } catch {
        return text
      }
    })()
    if (JSON.stringify(got) !== JSON.stringify(expected)) return `${path} is ${JSON.stringify(got)}, ${text} promised`
  }
  return null
}
