import { expect, test } from 'bun:test'
import { compareDirection } from '../../src/ui/app/compare-direction.ts'

const envs = (...names: string[]) => names.map((n) => ({ name: n.replace('!', ''), protected: n.endsWith('!') }))

test('Compare opens toward the protected environment, from the one before it', () => {
  expect(compareDirection(envs('development', 'staging', 'production!'), 'development')).toEqual({ from: 'staging', to: 'production' })
  expect(compareDirection(envs('development', 'staging', 'production!'), 'production')).toEqual({ from: 'staging', to: 'production' })
})

test('without a protected one, it opens from the chosen environment toward the next', () => {
  expect(compareDirection(envs('development', 'staging', 'production'), 'development')).toEqual({ from: 'development', to: 'staging' })
  expect(compareDirection(envs('development', 'staging', 'production'), 'production')).toEqual({ from: 'staging', to: 'production' })
  expect(compareDirection(envs('development!', 'staging'), 'staging')).toEqual({ from: 'staging', to: 'development' })
  expect(compareDirection(envs('only'), 'only')).toEqual({ from: 'only', to: 'only' })
  expect(compareDirection([], undefined)).toEqual({ from: '', to: '' })
})
