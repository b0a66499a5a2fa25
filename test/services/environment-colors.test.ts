/**
 * Environment colours as a use case (docs/api.md#environment-colours): every read carries the
 * effective colour (its own, else the default for its name); `color` on a PUT sets it, `null` goes
 * back to the default; a colour that is not CSS is refused naming `color`, changing nothing.
 */

import { expect, test } from 'bun:test'
import { defaultColor } from '../../src/domain/environment-color.ts'
import { failureOf, tempServices, userCaller } from '../helpers/temp-services.ts'
import { SYSTEM } from '../helpers/test-app.ts'

const worlds = tempServices()
const admin = userCaller('usr_admin', ['flag:read', 'flag:write', 'environment:write'])

const colorOf = (w: { s: { environments: { list(c: typeof SYSTEM): { name: string; color: string }[] } } }, name: string) =>
  w.s.environments.list(SYSTEM).find((e) => e.name === name)?.color

test('reads carry the default colour by name until one is set', async () => {
  const w = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'development' } })
  w.advance(1000)
  await w.s.environments.put(admin, 'staging', {})
  w.advance(1000)
  const made = await w.s.environments.put(admin, 'production', { protected: true })
  expect(made.environment.color).toBe(defaultColor('production'))
  w.advance(1000)
  await w.s.environments.put(admin, 'qa', {})
  expect(w.s.environments.list(SYSTEM).map((e) => [e.name, e.color])).toEqual([
    ['development', defaultColor('development')],
    ['staging', defaultColor('staging')],
    ['production', defaultColor('production')],
    ['qa', defaultColor('qa')],
  ])
  // nothing is stored for a default colour
  expect(w.store.committed().environments.get('qa')?.color).toBeUndefined()
})

test('a colour set on create or change is kept by other changes, and null goes back to the default', async () => {
  const w = await world()
  const made = await w.s.environments.put(admin, 'preview', { color: 'teal' })
  expect(made).toMatchObject({ created: true, environment: { color: 'teal' } })
  await w.s.environments.put(admin, 'staging', { color: 'hsl(280, 60%, 35%)' })
  await w.s.environments.put(admin, 'staging', { description: 'before production' })
  expect(colorOf(w, 'staging')).toBe('hsl(280, 60%, 35%)')
  expect(w.store.committed().environments.get('staging')?.color).toBe('hsl(280, 60%, 35%)')
  const reset = await w.s.environments.put(admin, 'staging', { color: null })
  expect(reset.environment.color).toBe(defaultColor('staging'))
  expect(w.store.committed().environments.get('staging')).not.toHaveProperty('color')
})

test('a colour that is not CSS is refused naming color, and nothing changes', async () => {
  const w = await world()
  await w.s.environments.put(admin, 'staging', { color: '#123456' })
  for (const color of ['#12345', 'blurple', 'rgb(300, 0, 0)', 'red; x: y', 7, true, {}]) {
    const err = await failureOf(w.s.environments.put(admin, 'staging', { color, description: 'changed' }))
    expect(err).toMatchObject({ code: 'INVALID_REQUEST' })
    expect((err.details.errors as { field: string }[]).map((p) => p.field)).toEqual(['color'])
    const made = await failureOf(w.s.environments.put(admin, 'qa', { color }))
    expect(made).toMatchObject({ code: 'INVALID_REQUEST' })
  }
  expect(w.s.environments.list(SYSTEM).map((e) => [e.name, e.description, e.color])).toEqual([
    ['development', '', defaultColor('development')],
    ['staging', '', '#123456'],
  ])
})

async function world() {
  const w = await worlds.open({ env: { FLAGD_ENVIRONMENT: 'development' } })
  w.advance(1000)
  await w.s.environments.put(admin, 'staging', {})
  return w
}
