/**
 * Environment colours (docs/api.md#environment-colours): each environment has one, shown in the web
 * UI's switcher, column headers and badges. Unset, it is a default by name: development grey,
 * staging amber, production red, and any other a hue of its own derived from its name.
 */

import { CSS_NAMED_COLORS } from './css-named-colors.ts'

/** The longest colour accepted, in characters. */
export const COLOR_MAX = 64

/** Default colours by environment name. */
const NAMED_DEFAULTS: Readonly<Record<string, string>> = {
  development: '#6b7280',
  dev: '#6b7280',
  staging: '#b45309',
  production: '#b91c1c',
  prod: '#b91c1c',
}

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i
const NUMBER = '(?:\\d+(?:\\.\\d+)?|\\.\\d+)'
const ALPHA = `${NUMBER}%?`
/** rgb()/rgba() with commas or spaces, every channel a number or every channel a percentage. */
const RGB = new RegExp(
  `^rgba?\\(\\s*(?:(${NUMBER})\\s*,\\s*(${NUMBER})\\s*,\\s*(${NUMBER})(?:\\s*,\\s*${ALPHA})?|(${NUMBER})%\\s*,\\s*(${NUMBER})%\\s*,\\s*(${NUMBER})%(?:\\s*,\\s*${ALPHA})?|(${NUMBER})\\s+(${NUMBER})\\s+(${NUMBER})(?:\\s*/\\s*${ALPHA})?|(${NUMBER})%\\s+(${NUMBER})%\\s+(${NUMBER})%(?:\\s*/\\s*${ALPHA})?)\\s*\\)$`,
  'i',
)
/** hsl()/hsla() with commas or spaces: a hue (optionally in deg), a saturation and a lightness in percent. */
const HSL = new RegExp(
  `^hsla?\\(\\s*(?:(${NUMBER})(?:deg)?\\s*,\\s*(${NUMBER})%\\s*,\\s*(${NUMBER})%(?:\\s*,\\s*${ALPHA})?|(${NUMBER})(?:deg)?\\s+(${NUMBER})%\\s+(${NUMBER})%(?:\\s*/\\s*${ALPHA})?)\\s*\\)$`,
  'i',
)

/** Whether every captured channel of `match` is at most its limit (percentages 100, channels 255). */
function inRange(match: RegExpMatchArray, limits: readonly number[]): boolean {
  return match.slice(1).every((v, i) => v === undefined || Number(v) <= (limits[i % limits.length] as number))
}

/**
 * Why `value` is not a colour an environment can have, or `undefined`: a hex `#rgb`/`#rrggbb`, an
 * `rgb()`/`hsl()` form (with or without alpha), or a CSS named colour (docs/api.md#environment-colours).
 */
export function colorProblem(value: unknown): string | undefined {
  const must = 'must be a CSS colour: #rgb, #rrggbb, rgb(…), hsl(…) or a named colour such as teal'
  if (typeof value !== 'string' || value.length > COLOR_MAX) return must
  if (HEX.test(value) || CSS_NAMED_COLORS.has(value.toLowerCase())) return undefined
  const rgb = value.match(RGB)
  // channels: numbers up to 255, percentages up to 100 (groups 4-6 and 10-12 are percentages)
  if (rgb) return inRange(rgb, [255, 255, 255, 100, 100, 100]) ? undefined : must
  const hsl = value.match(HSL)
  if (hsl) return inRange(hsl, [360, 100, 100]) ? undefined : must
  return must
}

/** A stable hue for `name` away from the reds and ambers of staging and production (60°-330°). */
function hueOf(name: string): number {
  let hash = 2166136261
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 16777619) >>> 0
  return 60 + (hash % 270)
}

/** The colour an environment named `name` has when none is set. */
export function defaultColor(name: string): string {
  return NAMED_DEFAULTS[name.toLowerCase()] ?? `hsl(${hueOf(name)}, 55%, 38%)`
}

/** The colour an environment shows: its own, else the default for its name. */
export function effectiveColor(environment: { name: string; color?: string }): string {
  return environment.color ?? defaultColor(environment.name)
}
