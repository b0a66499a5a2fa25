/** docs/environments.md#managing-environments: one name rule for the API, the CLI and the configuration. */

import { expect, test } from 'bun:test'
import { loadConfig } from '../../src/config.ts'
import { environmentNameProblem } from '../../src/domain/environment.ts'
import { createTestApp, SYSTEM, tempDir } from '../helpers/test-app.ts'

test('a word of the API paths cannot name an environment; other names can', () => {
  expect(environmentNameProblem('compare')).toBe('is a word of the API (/api/environments/compare); choose another name')
  expect(environmentNameProblem('Compare')).toBeUndefined()
  expect(environmentNameProblem('compare-v2')).toBeUndefined()
  expect(environmentNameProblem('staging')).toBeUndefined()
})

test('the service (which the CLI and the API share) refuses such a name and creates nothing', async () => {
  const t = await createTestApp()
  try {
    await expect(t.app.services.environments.put(SYSTEM, 'compare', {})).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
      details: { field: 'name' },
    })
    expect(t.app.services.environments.has('compare')).toBe(false)
  } finally {
    await t.close()
  }
})

test('config environment refuses it too, naming the key', async () => {
  const dir = tempDir()
  await expect(loadConfig({ cwd: dir, env: { FLAGD_ENVIRONMENT: 'compare' }, flags: { dataDir: dir } })).rejects.toThrow('environment')
})
