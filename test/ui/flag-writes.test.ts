/**
 * A save in a protected environment that also changes shared fields (docs/ui.md#review-before-protected-changes):
 * the shared fields are saved directly before the change request is made, so a review cancelled
 * after the request was refused must not say that nothing was changed.
 */

import { expect, mock, test } from 'bun:test'

const calls: string[] = []
const reviewed: string[][] = []
const asked: { environment: string; bypassIn: string[] | undefined }[] = []
let revision = 4
let refuseRequest = true

// the browser-bound modules flag-writes reaches, replaced: the API, the environment chosen, the dialog
mock.module('../../src/ui/app/api.ts', () => ({
  api: {
    PUT: async (_path: string, init: { body: Record<string, unknown> }) => {
      calls.push(`PUT ${Object.keys(init.body).sort().join(',')}`)
      revision++
      return { data: { revision } }
    },
    POST: async (path: string, init: { body: { changes?: { set: Record<string, unknown> }[] } }) => {
      calls.push(
        `POST ${path} ${Object.keys(init.body.changes?.[0]?.set ?? {})
          .sort()
          .join(',')}`,
      )
      return refuseRequest
        ? { error: { error: { code: 'VALIDATION_FAILED', message: 'scheduledAt must be in the future' } } }
        : { data: { id: 'cr_1', state: 'open' } }
    },
  },
  messageOf: (e: { error?: { message?: string } }) => e?.error?.message ?? String(e),
}))
// production (1 approval) and eu (2) protected, staging not; production chosen unless a test chooses staging
const ENVIRONMENTS = [
  { name: 'staging', protected: false, requiredApprovals: 0 },
  { name: 'production', protected: true, requiredApprovals: 1 },
  { name: 'eu', protected: true, requiredApprovals: 2 },
]
let chosen = 'production'
mock.module('../../src/ui/app/environment-choice.ts', () => ({
  current: () => chosen,
  useEnvironments: () => ({ list: ENVIRONMENTS, current: chosen }),
  environmentNamed: (name: string | undefined) => ENVIRONMENTS.find((e) => e.name === name),
  protectedEnvironments: () => ENVIRONMENTS.filter((e) => e.protected),
}))
mock.module('../../src/ui/app/review-dialog.tsx', () => ({
  needsReview: (env: string | undefined) => env === 'production',
  // the person asks for approval once (refused), then cancels
  reviewChanges: async (ask: {
    environment: string
    changes: { lines: string[] }[]
    bypassIn?: string[]
    run: (choice: unknown) => Promise<unknown>
  }) => {
    reviewed.push(ask.changes.flatMap((c) => c.lines))
    asked.push({ environment: ask.environment, bypassIn: ask.bypassIn })
    const outcome = await ask.run({ apply: false, title: 't', description: '' })
    if (outcome && typeof outcome === 'object' && 'error' in outcome) return { cancelled: true }
    return outcome
  },
}))

// imported by a name the type checker does not follow: the module is the browser program's (its own tsconfig, DOM types)
const modulePath = '../../src/ui/app/flag-writes.ts'
type Outcome = { saved: number } | { requested: unknown; environment?: string; saved?: number } | { error: unknown }
const { writeFlag } = (await import(modulePath)) as {
  writeFlag: (flag: Record<string, unknown>, body: Record<string, unknown>, viaRequest: boolean) => Promise<Outcome>
}

const flag = { name: 'shop/dark', revision: 4, type: 'BOOLEAN', description: 'old', value: false, valueExists: true }

test('a review cancelled after its shared fields were saved says they were, with their revision', async () => {
  calls.length = 0
  refuseRequest = true
  const outcome = await writeFlag(flag, { description: 'new', value: true }, false)
  // the description went out directly, the request was refused
  expect(calls).toEqual(['PUT description', 'POST /api/change-requests value'])
  expect('error' in outcome).toBe(true)
  const message = (outcome as { error: { error: { message: string } } }).error.error.message
  expect(message).not.toContain('nothing was changed')
  expect(message).toContain('description')
  expect(message).toContain('revision 5')
})

test('a review cancelled before anything was written still says nothing was changed', async () => {
  calls.length = 0
  refuseRequest = true
  const outcome = await writeFlag({ ...flag, revision: revision }, { description: 'old', value: true }, false)
  expect(calls).toEqual(['POST /api/change-requests value'])
  expect((outcome as { error: { error: { message: string } } }).error.error.message).toContain('nothing was changed')
})

test('a default value, which every protected environment serves, is reviewed and requested, never written directly', async () => {
  calls.length = 0
  reviewed.length = 0
  refuseRequest = false
  const current = { ...flag, revision, defaultValue: false }
  // only the default moves: without a review the write would go out at once (a bypass, for one who holds it)
  const outcome = await writeFlag(current, { description: 'old', defaultValue: true }, false)
  expect(reviewed).toEqual([['default value false → true']])
  expect(calls).toEqual(['POST /api/change-requests defaultValue'])
  expect(outcome).toEqual({ requested: { id: 'cr_1', state: 'open' }, environment: 'production' })
  // with a value and a description: the description alone is saved directly
  calls.length = 0
  await writeFlag(current, { description: 'new', defaultValue: true, value: true }, false)
  expect(calls).toEqual(['PUT description', 'POST /api/change-requests defaultValue,value'])
})

test('variants and prerequisites, which every environment serves, are requested in a protected environment too', async () => {
  calls.length = 0
  reviewed.length = 0
  refuseRequest = false
  const current = { ...flag, revision, variants: { on: true } }
  await writeFlag(current, { variants: { on: true, off: false } }, false)
  await writeFlag(current, { prerequisites: [{ flag: 'shop/base', variants: ['true'] }] }, false)
  expect(reviewed.length).toBe(2)
  expect(calls).toEqual(['POST /api/change-requests variants', 'POST /api/change-requests prerequisites'])
})

test('with staging chosen, a shared change is reviewed and requested in the strictest protected environment; staging is saved directly', async () => {
  chosen = 'staging'
  calls.length = 0
  reviewed.length = 0
  asked.length = 0
  refuseRequest = false
  const current = { ...flag, revision, defaultValue: false }
  const outcome = await writeFlag(current, { description: 'old', defaultValue: true, value: true }, false)
  expect(reviewed).toEqual([['default value false → true']])
  // a bypass would need both protected environments; the request goes to eu, which needs 2 approvals
  expect(asked).toEqual([{ environment: 'eu', bypassIn: ['production', 'eu'] }])
  expect(calls).toEqual(['PUT description,value', 'POST /api/change-requests defaultValue'])
  expect(outcome).toMatchObject({ requested: { id: 'cr_1' }, environment: 'eu', saved: revision })
  // staging's own state alone: saved directly, no review
  calls.length = 0
  await writeFlag({ ...current, revision }, { description: 'old', value: true }, false)
  expect(calls).toEqual(['PUT description,value'])
  expect(reviewed).toHaveLength(1)
  chosen = 'production'
})

test("an ENUM's values are reviewed only when one is removed; adding one, or a TAG's, is saved directly", async () => {
  chosen = 'staging'
  calls.length = 0
  reviewed.length = 0
  refuseRequest = false
  const size = { ...flag, type: 'ENUM', revision, enumValues: ['s', 'm'], value: 's', defaultValue: 's' }
  await writeFlag(size, { enumValues: ['s', 'm', 'l'] }, false)
  expect(calls).toEqual(['PUT enumValues'])
  await writeFlag({ ...size, revision }, { enumValues: ['s'] }, false)
  expect(calls).toEqual(['PUT enumValues', 'POST /api/change-requests enumValues'])
  await writeFlag({ ...size, type: 'TAG', revision }, { enumValues: ['s'] }, false)
  expect(calls).toEqual(['PUT enumValues', 'POST /api/change-requests enumValues', 'PUT enumValues'])
  expect(reviewed).toHaveLength(1)
  chosen = 'production'
})
