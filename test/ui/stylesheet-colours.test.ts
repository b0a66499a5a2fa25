/**
 * Every colour of the web UI's stylesheet comes from a custom property on `:root`
 * (docs/ui.md#colours): a declaration anywhere else names colours with `var(--…)` only.
 */

import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { CSS_NAMED_COLORS } from '../../src/domain/css-named-colors.ts'

const STYLESHEET = join(import.meta.dir, '../../src/ui/app/styles.css')

/** Each declaration of `css` with the selector (or at-rule) of the block it is in. */
function declarations(css: string): { selector: string; property: string; value: string }[] {
  const text = css.replace(/\/\*[\s\S]*?\*\//g, '')
  const found: { selector: string; property: string; value: string }[] = []
  const stack: string[] = []
  let buffer = ''
  const take = () => {
    const at = buffer.indexOf(':')
    if (buffer.trim() !== '' && at > 0)
      found.push({ selector: stack.at(-1) ?? '', property: buffer.slice(0, at).trim(), value: buffer.slice(at + 1).trim() })
    buffer = ''
  }
  for (const ch of text) {
    if (ch === '{') {
      stack.push(buffer.trim())
      buffer = ''
    } else if (ch === ';') take()
    else if (ch === '}') {
      take()
      stack.pop()
    } else buffer += ch
  }
  return found
}

/** The literal colours in a declaration's value (custom property references left out). */
function literalColours(value: string): string[] {
  const bare = value.replace(/var\(\s*--[\w-]+/g, 'var(').replace(/"[^"]*"|'[^']*'/g, '')
  const hex = bare.match(/#[0-9a-f]{3,8}\b/gi) ?? []
  const functions = bare.match(/\b(?:rgba?|hsla?|hwb|lab|lch|oklab|oklch|color)\(/gi) ?? []
  const named = (bare.toLowerCase().match(/[a-z]+/g) ?? []).filter((word) => CSS_NAMED_COLORS.has(word))
  return [...hex, ...functions, ...named]
}

test('the checker finds literal colours and lets custom properties through', () => {
  const css =
    ':root { --x: #fff; color: var(--x) } a { color: red; background: rgb(1 2 3) } b { border: 1px solid var(--x) } c { --y: #000 }'
  const literal = declarations(css)
    .filter((d) => !(d.selector === ':root' && d.property.startsWith('--')))
    .flatMap((d) => literalColours(d.value))
  expect(literal).toEqual(['red', 'rgb(', '#000'])
})

test('no literal colour outside the custom properties on :root', () => {
  const css = readFileSync(STYLESHEET, 'utf8')
  const all = declarations(css)
  const offending = all
    .filter((d) => !(d.selector === ':root' && d.property.startsWith('--')))
    .filter((d) => literalColours(d.value).length > 0)
    .map((d) => `${d.selector} { ${d.property}: ${d.value} }`)
  expect(offending).toEqual([])
  // and the palette is there
  expect(all.filter((d) => d.selector === ':root' && d.property.startsWith('--')).length).toBeGreaterThan(10)
})

test('every block of the stylesheet is closed where it ends, not by the end of the file', () => {
  // CSS closes a block left open at the end of the file, so a brace lost in a merge would silently
  // nest every rule after it inside the block before
  const text = readFileSync(STYLESHEET, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '')
  let depth = 0
  let lowest = 0
  for (const ch of text) {
    if (ch === '{') depth++
    else if (ch === '}') lowest = Math.min(lowest, --depth)
  }
  expect({ depth, lowest }).toEqual({ depth: 0, lowest: 0 })
})
