/**
 * JSON laid out for people to read and diff, as the flagd-format export file is written
 * (docs/targeting.md#flagd-format): a value that fits on a line stays on one, a longer one opens
 * with two spaces a level (an object of one key, as a rule's operator, hugs its value), and runs
 * of short items of a list (a `fractional`'s buckets) share lines, so a long rule takes a few lines
 * rather than four per bucket. It parses back to the same value as `JSON.stringify` would give.
 */

const WIDTH = 100
const SHORT = 24

/** `value` as readable JSON, ending with a newline. */
export function readableJson(value: unknown): string {
  return `${layout(value, '', 0)}\n`
}

/** `value` laid out at `indent`, after `taken` characters of its first line and before as many on its last. */
function layout(value: unknown, indent: string, taken: number): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null'
  // a list of more than WIDTH / 2 items (or an object of WIDTH / 4 keys) cannot fit: not written out flat first
  const many = Array.isArray(value) ? value.length > WIDTH / 2 : Object.keys(value).length > WIDTH / 4
  const flat = many ? '' : JSON.stringify(value)
  if (!many && indent.length + taken + flat.length <= WIDTH) return flat
  const inner = `${indent}  `
  const lines: string[] = []
  if (Array.isArray(value)) {
    let run = ''
    for (const item of value) {
      const text = JSON.stringify(item) ?? 'null'
      if (text.length > SHORT) {
        if (run) lines.push(run)
        run = ''
        lines.push(layout(item, inner, 1))
      } else if (run && inner.length + run.length + text.length + 2 > WIDTH) {
        lines.push(run)
        run = text
      } else run = run ? `${run},${text}` : text
    }
    if (run) lines.push(run)
    return `[\n${inner}${lines.join(`,\n${inner}`)}\n${indent}]`
  }
  const entries = Object.entries(value)
  // a rule's operator hugs its arguments: {"if": [ … ]} costs one level of indentation, not two
  const [only] = entries
  if (entries.length === 1 && only !== undefined && only[1] !== null && typeof only[1] === 'object')
    return `{${JSON.stringify(only[0])}: ${layout(only[1], indent, taken + only[0].length + 6)}}`
  for (const [key, v] of entries) {
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue
    lines.push(`${JSON.stringify(key)}: ${layout(v, inner, key.length + 5)}`)
  }
  return `{\n${inner}${lines.join(`,\n${inner}`)}\n${indent}}`
}
