/**
 * Any tool's translation made an import document (docs/migrations.md#from-other-tools): flags the
 * validation refuses are skipped with its reason and the tool's key, a segment it refuses takes
 * the flags using it along, changes for a later time are handed on (or skip their flag where they
 * cannot be scheduled), and the rest is kept.
 */

import { expect, test } from 'bun:test'
import { parseForeignDocument } from '../../../src/domain/foreign/foreign-document.ts'
import type { ForeignTranslation } from '../../../src/domain/foreign/foreign-translation.ts'

const meta = (key: string) => ({ originalKey: key, importedFrom: 'gofeatureflag' })
const translation = (): ForeignTranslation => ({
  flags: {
    kept: { type: 'BOOLEAN', value: true, metadata: meta('kept') },
    later: { type: 'BOOLEAN', value: false, metadata: meta('later') },
    bad_value: { type: 'INTEGER', value: 'seven', metadata: meta('bad value') },
    on_bad_segment: { type: 'BOOLEAN', targeting: { if: [{ $ref: 'broken' }, 'true', null] }, metadata: meta('on-bad-segment') },
  },
  segments: { broken: { description: '', rule: { nosuchoperator: [1] } } },
  skipped: [{ name: 'custom', reason: 'a custom strategy' }],
  warnings: [{ field: 'percentages', reason: 'sizes kept' }],
  scheduled: [{ flag: 'later', at: '2027-01-01T00:00:00.000Z', changes: { value: true } }],
})

test("what cannot be imported is skipped by the tool's key with the reason; the rest is the document", () => {
  const refuseScheduled = () => 'cannot be scheduled here'
  const out = parseForeignDocument('gofeatureflag', {}, { nowMs: 0, refuseScheduled }, { translate: () => translation() })
  expect([...out.document.flags.keys()]).toEqual(['kept'])
  expect(out.scheduled).toEqual([])
  expect(out.document.source).toEqual({ environment: '', version: '', createdAt: '', format: 'gofeatureflag' })
  const reasons = Object.fromEntries(out.skipped.map((s) => [s.name, s.reason]))
  expect(Object.keys(reasons).sort()).toEqual(['bad value', 'custom', 'later', 'on-bad-segment'])
  expect(reasons['bad value']).toContain("refused by flagd's validation: value")
  expect(reasons.later).toBe('cannot be scheduled here')
  expect(out.document.warnings).toContainEqual({ field: 'percentages', reason: 'sizes kept' })
  expect(out.document.warnings.some((w) => w.field.startsWith('segments.broken'))).toBe(true)
})

test('changes for a later time that can be scheduled keep their flag and are handed on', () => {
  const out = parseForeignDocument('gofeatureflag', {}, { nowMs: 0 }, { translate: () => translation() })
  expect([...out.document.flags.keys()].sort()).toEqual(['kept', 'later'])
  expect(out.scheduled).toEqual([{ flag: 'later', at: '2027-01-01T00:00:00.000Z', changes: { value: true } }])
})

test('a file the translator cannot read is refused whole with its problems', () => {
  const unreadable = () =>
    parseForeignDocument('flipt', {}, { nowMs: 0 }, { translate: () => ({ problems: [{ field: 'body', reason: 'no' }] }) })
  expect(unreadable).toThrow()
})

test('a refusal is charged to the longest flag name its field starts with (names may hold dots), each step to its own flag', () => {
  const steps = (flag: string) => [
    { flag, at: '2027-01-01T00:00:00.000Z', changes: { value: true } },
    { flag, at: '2027-02-01T00:00:00.000Z', changes: { value: false } },
  ]
  const seen: string[][] = []
  const out = parseForeignDocument(
    'gofeatureflag',
    {},
    { nowMs: 0, refuseScheduled: (s) => (seen.push(s.map((x) => `${x.flag}@${x.at}`)), undefined) },
    {
      translate: () => ({
        flags: {
          app: { type: 'BOOLEAN', value: true, metadata: meta('app') },
          'app.checkout': { type: 'INTEGER', value: 'seven', metadata: meta('app.checkout') },
          'app.checkout.v2': { type: 'BOOLEAN', value: false, metadata: meta('app.checkout.v2') },
        },
        segments: {},
        skipped: [],
        warnings: [],
        scheduled: [...steps('app'), ...steps('app.checkout.v2')],
      }),
    },
  )
  expect([...out.document.flags.keys()]).toEqual(['app', 'app.checkout.v2'])
  expect(out.skipped.map((s) => s.name)).toEqual(['app.checkout'])
  expect(seen).toEqual([
    ['app@2027-01-01T00:00:00.000Z', 'app@2027-02-01T00:00:00.000Z'],
    ['app.checkout.v2@2027-01-01T00:00:00.000Z', 'app.checkout.v2@2027-02-01T00:00:00.000Z'],
  ])
  expect(out.scheduled).toHaveLength(4)
})
