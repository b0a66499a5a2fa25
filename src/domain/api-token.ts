/** API tokens as stored (contract §12): only a hash of the secret is ever kept. */

import type { Permission } from './permission.ts'

/** Who created a token, like an audit actor. */
export interface TokenCreator {
  type: 'user' | 'token' | 'system'
  id: string
  name: string
}

/** A token as kept in the store. */
export interface StoredToken {
  id: string
  name: string
  /** SHA-256 of the secret, hex. */
  secretHash: string
  permissions: Permission[]
  flagPrefixes: string[]
  createdAt: string
  createdBy: TokenCreator
  expiresAt: string | null
  lastUsedAt: string | null
}
