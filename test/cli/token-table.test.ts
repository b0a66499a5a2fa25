/** `flagd token list`'s table (docs/operations.md): every column a reader needs, the environment included. */

import { expect, test } from 'bun:test'
import { tokenTable } from '../../src/cli/token-command.ts'
import type { PublicToken } from '../../src/domain/api-token.ts'

const token = (over: Partial<PublicToken>): PublicToken =>
  ({
    id: 'tok_1',
    name: 'app',
    permissions: ['flag:evaluate'],
    flagPrefixes: [],
    createdAt: '2026-12-01T00:00:00.000Z',
    createdBy: { type: 'user', id: 'usr_1', name: 'admin' },
    expiresAt: null,
    lastUsedAt: null,
    ...over,
  }) as PublicToken

test('a token bound to an environment says which; one of none evaluates the default', () => {
  const lines = tokenTable([token({ name: 'storefront-prod', environment: 'production' }), token({ id: 'tok_2', name: 'ci' })]).split('\n')
  expect(lines[0]).toMatch(/ENVIRONMENT/)
  expect(lines.find((l) => l.includes('storefront-prod'))).toContain('production')
  expect(lines.find((l) => l.includes(' ci '))).toContain('(default)')
})
