import { expect, test } from 'bun:test'
import { type Difference, promotedByDefault, promotionSet } from '../../src/ui/app/promotion-choice.ts'

const now = Date.parse('2030-01-05T00:00:00Z')
const rollout = (end: string) => ({ variant: 'true', start: '2030-01-01T00:00:00Z', end, fromPercent: 5, toPercent: 100 })

test('Promote preselects every differing flag but one whose promotion would end a rollout running in the target', () => {
  const differences: Difference[] = [
    { name: 'plain', fields: { value: { from: true, to: false } } },
    { name: 'running', fields: { rollout: { from: null, to: rollout('2030-01-08T00:00:00Z') } } },
    { name: 'finished', fields: { rollout: { from: null, to: rollout('2030-01-02T00:00:00Z') } } },
    { name: 'starting', fields: { rollout: { from: rollout('2030-01-09T00:00:00Z'), to: null } } },
  ]
  expect([...promotedByDefault(differences, now)].sort()).toEqual(['finished', 'plain', 'starting'])
})

test('Promote leaves unticked a flag the target changed after the source: promoting would undo that change', () => {
  const differences: Difference[] = [
    { name: 'source-newer', fields: { value: { from: true, to: false } }, revisions: { from: 5, to: 3 } },
    { name: 'hotfix-in-target', fields: { value: { from: true, to: false } }, revisions: { from: 5, to: 8 } },
    { name: 'shared-change-last', fields: { value: { from: true, to: false } }, revisions: { from: 9, to: 9 } },
    { name: 'no-revisions', fields: { value: { from: true, to: false } } },
  ]
  expect([...promotedByDefault(differences, now)].sort()).toEqual(['no-revisions', 'shared-change-last', 'source-newer'])
})

test("a promotion's request sets each differing field to the source's, a missing value through valueExists", () => {
  expect(promotionSet({ name: 'f', fields: { value: { from: null, to: 3 }, valueExists: { from: false, to: true } } })).toEqual({
    valueExists: false,
  })
  expect(promotionSet({ name: 'f', fields: { enabled: { from: false, to: true }, rollout: { from: null, to: {} } } })).toEqual({
    enabled: false,
    rollout: null,
  })
})
