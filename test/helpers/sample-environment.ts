/** A valid stored environment for domain and storage tests. */

import type { Environment } from '../../src/domain/environment.ts'

/** An unprotected environment row named `name` (its id is its name), created and updated `at`, with `extra` over it. */
export function sampleEnvironment(name: string, extra: Partial<Environment> = {}, at = '2026-12-01T00:00:00.000Z'): Environment {
  return { id: name, name, description: '', protected: false, requiredApprovals: 0, createdAt: at, updatedAt: at, ...extra }
}
