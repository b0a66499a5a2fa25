/** GO Feature Flag's dates read as text and its scheduled steps applied (docs/migrations.md#from-go-feature-flag), without changing the file read. */

import { describe, expect, test } from 'bun:test'
import { applyStep, withTextDates } from '../../../src/domain/foreign/gofeatureflag-schedule.ts'

describe('withTextDates', () => {
  test('a date anywhere becomes RFC 3339 text; an invalid one null; an instant of a TOML reader text', () => {
    const raw = {
      at: new Date('2027-01-15T00:00:00Z'),
      steps: [{ date: new Date('2027-02-01T12:00:00Z') }, { date: new Date(Number.NaN) }],
      toml: { epochMilliseconds: Date.parse('2027-03-01T00:00:00Z') },
    }
    expect(withTextDates(raw)).toEqual({
      at: '2027-01-15T00:00:00.000Z',
      steps: [{ date: '2027-02-01T12:00:00.000Z' }, { date: null }],
      toml: '2027-03-01T00:00:00.000Z',
    })
  })

  test('the value read is not changed', () => {
    const date = new Date('2027-01-15T00:00:00Z')
    const raw = { rules: [{ name: 'a', date }, { name: 'b' }], meta: { team: 'x' } }
    withTextDates(raw)
    expect(raw.rules[0]?.date).toBe(date)
    expect(raw).toEqual({ rules: [{ name: 'a', date }, { name: 'b' }], meta: { team: 'x' } })
  })

  test('a part without a date is the part read; only the way to a date is copied', () => {
    const raw = { rules: [{ name: 'a' }, { name: 'b', date: new Date('2027-01-15T00:00:00Z') }], meta: { team: 'x' } }
    const read = withTextDates(raw) as typeof raw
    expect(read).not.toBe(raw)
    expect(read.rules).not.toBe(raw.rules)
    expect(read.rules[0]).toBe(raw.rules[0])
    expect(read.rules[1]).not.toBe(raw.rules[1])
    expect(read.meta).toBe(raw.meta)
    const plain = { variations: { on: true, off: false }, targeting: [{ query: 'a eq "b"' }] }
    expect(withTextDates(plain)).toBe(plain)
  })

  test('a copy keeps every key as data, `__proto__` too, in order', () => {
    const raw = JSON.parse('{"a":1,"__proto__":{"x":1},"b":"2027-01-15"}') as Record<string, unknown>
    raw.c = new Date('2027-01-15T00:00:00Z')
    const read = withTextDates(raw) as Record<string, unknown>
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype)
    expect(Object.keys(read)).toEqual(['a', '__proto__', 'b', 'c'])
    expect(Object.hasOwn(read, '__proto__')).toBe(true)
    expect(read.c).toBe('2027-01-15T00:00:00.000Z')
  })

  test('an object of another kind is read as its text; one without a prototype as a plain object', () => {
    expect(withTextDates({ when: new URL('https://example.com/') })).toEqual({ when: 'https://example.com/' })
    const bare = Object.assign(Object.create(null) as Record<string, unknown>, { a: 1 })
    const read = withTextDates(bare)
    expect(Object.getPrototypeOf(read)).toBe(Object.prototype)
    expect(read).toEqual({ a: 1 })
  })
})

describe('applyStep', () => {
  test('the step is applied; neither the flag nor the step is changed', () => {
    const flag = {
      variations: { on: true, off: false },
      targeting: [{ name: 'vip', query: 'tier eq "vip"', variation: 'on' }],
      defaultRule: { percentage: { on: 10, off: 90 } },
      experimentation: { start: '2027-01-01T00:00:00Z' },
    }
    const step = {
      targeting: [
        { name: 'vip', variation: 'off' },
        { query: 'beta eq true', variation: 'on' },
      ],
      defaultRule: { percentage: { on: 50, off: 50 } },
      variations: { maybe: false },
      experimentation: { end: '2027-02-01T00:00:00Z' },
      disable: true,
    }
    const flagBefore = structuredClone(flag)
    const stepBefore = structuredClone(step)
    const next = applyStep(flag, step)
    expect(next).toEqual({
      variations: { on: true, off: false, maybe: false },
      targeting: [
        { name: 'vip', query: 'tier eq "vip"', variation: 'off' },
        { query: 'beta eq true', variation: 'on' },
      ],
      defaultRule: { percentage: { on: 50, off: 50 } },
      experimentation: { start: '2027-01-01T00:00:00Z', end: '2027-02-01T00:00:00Z' },
      disable: true,
    })
    expect(flag).toEqual(flagBefore)
    expect(step).toEqual(stepBefore)
    expect(next).not.toBe(flag)
  })

  test('a step leaves the fields it does not name as they were', () => {
    const flag = { variations: { on: true, off: false }, metadata: { team: 'x' }, defaultRule: { variation: 'on' } }
    const next = applyStep(flag, { disable: true })
    expect(next).toEqual({ ...flag, disable: true })
    expect(flag).toEqual({ variations: { on: true, off: false }, metadata: { team: 'x' }, defaultRule: { variation: 'on' } })
  })
})
