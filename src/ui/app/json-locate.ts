/**
 * Where a path the service names (`targeting.if[1].$ref`) sits in JSON text a person typed, so the
 * JSON editor can put the service's message at the offending part and select it (docs/ui.md).
 * A small scanner over the text rather than a parser of values: it only records each value's span.
 */

/** The span of a value in the text and the line it starts on (1-based). */
export interface Span {
  start: number
  end: number
  line: number
}

/** Every value's span by its path in the service's notation, `root` for the whole text. */
export function spansOf(text: string, root: string): Map<string, Span> {
  const spans = new Map<string, Span>()
  let i = 0
  const space = () => {
    while (i < text.length && /\s/.test(text[i] as string)) i++
  }
  const string = () => {
    const start = i++
    while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1
    i++
    return text.slice(start, i)
  }
  const value = (path: string) => {
    space()
    const start = i
    const c = text[i]
    if (c === '{') {
      i++
      space()
      while (i < text.length && text[i] !== '}') {
        space()
        if (text[i] !== '"') return
        let key: string
        try {
          key = JSON.parse(string()) as string
        } catch {
          return
        }
        space()
        if (text[i] !== ':') return
        i++
        value(`${path}.${key}`) // the service names every key so, whatever its characters
        space()
        if (text[i] === ',') i++
        space()
      }
      i++
    } else if (c === '[') {
      i++
      let n = 0
      space()
      while (i < text.length && text[i] !== ']') {
        value(`${path}[${n++}]`)
        space()
        if (text[i] === ',') i++
        else if (text[i] !== ']') return
        space()
      }
      i++
    } else if (c === '"') string()
    else while (i < text.length && !/[\s,\]}]/.test(text[i] as string)) i++
    if (i === start) i++ // a stray character: move on rather than loop
    spans.set(path, { start, end: i, line: text.slice(0, start).split('\n').length })
  }
  value(root)
  return spans
}

/** The span of `path`, or of its nearest enclosing value the text has. */
export function locate(text: string, root: string, path: string): Span | undefined {
  const spans = spansOf(text, root)
  let p = path
  for (;;) {
    const span = spans.get(p)
    if (span) return span
    const cut = Math.max(p.lastIndexOf('.'), p.lastIndexOf('['))
    if (cut <= 0) return undefined
    p = p.slice(0, cut)
  }
}
