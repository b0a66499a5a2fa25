/**
 * The OpenAPI document serves client generators (docs/api.md#openapi): openapi-typescript with default
 * options generates types from a running daemon's document, a plain strict client
 * (test/fixtures/client/strict-client.ts) that calls every operation type-checks with them without
 * a cast (every flag type created without optional fields, an export passed straight back to import),
 * and then runs against that daemon.
 */

import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import openapiTS, { astToString } from 'openapi-typescript'
import { type Daemon, killLiveDaemons, startDaemon } from '../helpers/daemon.ts'
import { tempDir } from '../helpers/test-app.ts'

// the generated types are type-checked with tsc and a daemon is spawned: on a busy 2-core machine
// that has taken over a minute, so this file may run longer than the suite's default (no time is asserted)
setDefaultTimeout(180_000)
const ROOT = join(import.meta.dir, '../..')
const PASSWORD = 'generated-client-password'
const cwd = tempDir()
// inside the repository, so the client resolves openapi-fetch from node_modules
const clientDir = mkdtempSync(join(ROOT, '.tmp-client-'))
let d: Daemon
beforeAll(async () => {
  d = await startDaemon(cwd, [], { FLAGD_ADMIN_USERNAME: 'admin', FLAGD_ADMIN_PASSWORD: PASSWORD })
})
afterAll(async () => {
  await killLiveDaemons()
  rmSync(cwd, { recursive: true, force: true })
  rmSync(clientDir, { recursive: true, force: true })
})

test('a strict client generated with default options type-checks without casts and works', async () => {
  const document = await (await fetch(`${d.url}/api/openapi.json`)).json()
  // \`api.ts\`, not \`.d.ts\`: checked in full while \`skipLibCheck\` skips the libraries' own declarations
  // (lib.dom and openapi-fetch), which this test does not exist to check and which were half of tsc's CPU
  writeFileSync(join(clientDir, 'api.ts'), astToString(await openapiTS(document as never)))
  copyFileSync(join(ROOT, 'test/fixtures/client/strict-client.ts'), join(clientDir, 'strict-client.ts'))
  writeFileSync(
    join(clientDir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noUncheckedIndexedAccess: true,
        target: 'ESNext',
        module: 'ESNext',
        moduleResolution: 'bundler',
        noEmit: true,
        lib: ['ESNext', 'DOM'],
        types: [],
        skipLibCheck: true,
      },
      files: ['strict-client.ts'],
    }),
  )
  const tsc = Bun.spawnSync([process.execPath, join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', join(clientDir, 'tsconfig.json')], {
    stdout: 'pipe',
    stderr: 'pipe',
  })
  expect(tsc.stdout.toString() + tsc.stderr.toString()).toBe('')
  expect(tsc.exitCode).toBe(0)

  const { exercise } = (await import(join(clientDir, 'strict-client.ts'))) as {
    exercise: (url: string, password: string) => Promise<string[]>
  }
  const done = await exercise(d.url, PASSWORD)
  expect(done).toEqual([
    'login as admin with 15 permissions',
    'flag revision 2',
    '6 flags',
    'import of the export: 6 unchanged, 0 warnings',
    'url import refused: INVALID_REQUEST',
    'audit page of 5 entries',
    'public export of 6 flags',
    'me: admin',
    'deleted client/ab',
    'token client ci saw 5 flags of 1 token(s); after revoke 401',
    'missing flag: NOT_FOUND',
    'health ok',
  ])
})
