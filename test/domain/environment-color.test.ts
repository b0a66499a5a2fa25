/** Environment colours (docs/api.md#environment-colours): which CSS colours are taken, and the defaults by name. */

import { expect, test } from 'bun:test'
import { colorProblem, defaultColor, effectiveColor } from '../../src/domain/environment-color.ts'

test('hex, rgb(), hsl() and named colours are taken', () => {
  for (const ok of [
    '#abc',
    '#A1B2C3',
    'rgb(12, 34, 255)',
    'rgba(0,0,0,0.5)',
    'rgb(10% 20% 30%)',
    'rgb(1 2 3 / 50%)',
    'hsl(200, 50%, 40%)',
    'hsla(200deg, 50%, 40%, .5)',
    'hsl(120 40% 30% / 0.8)',
    'teal',
    'RebeccaPurple',
  ])
    expect([ok, colorProblem(ok)]).toEqual([ok, undefined])
})

test('anything else is refused with a reason', () => {
  for (const bad of [
    '',
    '#ab',
    '#abcd',
    '#ggg',
    'rgb(256, 0, 0)',
    'rgb(1, 2)',
    'rgb(10%, 2, 3)',
    'hsl(400, 50%, 50%)',
    'hsl(10, 50, 50)',
    'transparent',
    'currentcolor',
    'notacolour',
    'red; background: url(x)',
    ' red',
    'x'.repeat(65),
    12,
    null,
  ])
    expect(colorProblem(bad)).toMatch(/CSS colour/)
})

test('defaults: development grey, staging amber, production red; any other a stable colour of its own', () => {
  expect(defaultColor('development')).toBe(defaultColor('dev'))
  expect(defaultColor('production')).toBe(defaultColor('prod'))
  const named = new Set([defaultColor('development'), defaultColor('staging'), defaultColor('production')])
  expect(named.size).toBe(3)
  const others = ['qa', 'eu-west', 'preview', 'canary'].map(defaultColor)
  expect(others).toEqual(['qa', 'eu-west', 'preview', 'canary'].map(defaultColor))
  expect(new Set(others).size).toBe(others.length)
  for (const c of others) {
    expect(colorProblem(c)).toBeUndefined()
    expect(named.has(c)).toBe(false)
  }
  expect(effectiveColor({ name: 'staging' })).toBe(defaultColor('staging'))
  expect(effectiveColor({ name: 'staging', color: 'teal' })).toBe('teal')
})
