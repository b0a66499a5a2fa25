/**
 * Every relative link of README.md and docs/*.md resolves (docs/development.md#readme-recipes): the
 * file exists, its `#anchor` is a heading there (GitHub's slugs), and no document links to itself
 * under its file name (an in-page link is `#anchor` alone).
 */

import { expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = join(import.meta.dir, '../..')
const DOCS = [
  'README.md',
  'CHANGELOG.md',
  ...readdirSync(join(ROOT, 'docs'), { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
]

/** GitHub's anchor of a heading: lower case, punctuation dropped, spaces to dashes. */
function slugOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\s-]/gu, '')
    .replace(/\s/g, '-')
}

/** The anchors a Markdown file offers: its headings (repeated ones numbered, as GitHub does) and explicit ids. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>()
  const anchors = new Set<string>()
  const body = text.replace(/```[\s\S]*?```/g, '')
  for (const m of body.matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = slugOf(m[1] as string)
    const n = seen.get(slug) ?? 0
    seen.set(slug, n + 1)
    anchors.add(n === 0 ? slug : `${slug}-${n}`)
  }
  for (const m of body.matchAll(/<a\s+(?:name|id)="([^"]+)"/g)) anchors.add(m[1] as string)
  return anchors
}

/** The links of a Markdown text, code blocks and inline code left out. */
function linksOf(text: string): string[] {
  const body = text.replace(/```[\s\S]*?```/g, '').replace(/`[^`\n]*`/g, '')
  return [...body.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string)
}

test('every relative link and anchor in the README and docs resolves, and none is a self link under another name', () => {
  const problems: string[] = []
  for (const doc of DOCS) {
    const file = join(ROOT, doc)
    for (const link of linksOf(readFileSync(file, 'utf8'))) {
      if (/^[a-z]+:/i.test(link)) continue
      const [path = '', anchor] = link.split('#')
      const target = path === '' ? file : resolve(dirname(file), decodeURIComponent(path))
      if (path !== '' && target === file) problems.push(`${doc}: ${link} links to itself (write #${anchor ?? ''})`)
      if (!existsSync(target)) {
        problems.push(`${doc}: ${link}: no ${relative(ROOT, target)}`)
        continue
      }
      if (anchor !== undefined && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor))
        problems.push(`${doc}: ${link}: ${relative(ROOT, target)} has no heading #${anchor}`)
    }
  }
  expect(problems).toEqual([])
})

test('GitHub slugs: punctuation dropped, spaces to dashes', () => {
  expect(slugOf('Protect production: request, approve, roll out over a week')).toBe(
    'protect-production-request-approve-roll-out-over-a-week',
  )
  expect(slugOf('`flagd promote` and the UI')).toBe('flagd-promote-and-the-ui')
})
