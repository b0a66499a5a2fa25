/** The licence: Apache-2.0 (that of the OpenFeature ecosystem flagd builds on), said the same way everywhere. */

import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import pkg from '../package.json' with { type: 'json' }

const ROOT = join(import.meta.dir, '..')

test('LICENSE holds the Apache License 2.0, package.json and the README name it', () => {
  const text = readFileSync(join(ROOT, 'LICENSE'), 'utf8')
  expect(text).toContain('Apache License')
  expect(text).toContain('Version 2.0, January 2004')
  expect(text).toContain('END OF TERMS AND CONDITIONS')
  expect((pkg as { license?: string }).license).toBe('Apache-2.0')
  expect(readFileSync(join(ROOT, 'README.md'), 'utf8')).toMatch(/## Licen[cs]e\n\n.*Apache License 2\.0/)
})
