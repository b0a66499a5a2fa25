/**
 * LaunchDarkly's `semVer*` clause values as the import reads them (docs/migrations.md#from-launchdarkly):
 * only versions flagd's `sem_ver` can compare become rules.
 */

import { expect, test } from 'bun:test'
import { fullVersion } from '../../../src/domain/foreign/launchdarkly-clause.ts'
import { parseStrictVersion } from '../../../src/domain/targeting/sem-ver.ts'

test('a version is written out in full when flagd can compare it, else it is none', () => {
  expect(fullVersion('1.2')).toBe('1.2.0')
  expect(fullVersion('2')).toBe('2.0.0')
  expect(fullVersion('1.2.3-rc.1+build.5')).toBe('1.2.3-rc.1+build.5')
  for (const none of ['v1.2.3', ' 1.2.3', '1.2.3 ', '01.2.3', '1.2.3-', '1.2.3-01', 'x', '']) expect(fullVersion(none)).toBeUndefined()
  // longer than flagd's sem_ver reads: a rule on it would never match, and a megabyte of it took seconds
  const long = `1.2.3-${'a.'.repeat(200)}a`
  expect(parseStrictVersion(long)).toBeUndefined()
  expect(fullVersion(long)).toBeUndefined()
  expect(fullVersion(`1.2.3-${'a.'.repeat(500_000)}a`)).toBeUndefined()
})
