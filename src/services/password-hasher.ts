/**
 * argon2id hashing through `Bun.password`, at OWASP's minimum cost or above (19 MiB, 2 passes),
 * with at most `maxConcurrent` hashes in flight: each costs 19 MiB and a core for tens of
 * milliseconds, so a burst of logins queues instead of exhausting memory.
 */

/** Hashes and verifies passwords. */
export interface PasswordHasher {
  hash(password: string): Promise<string>
  verify(password: string, hash: string): Promise<boolean>
  /** Verifies against a fixed dummy hash so unknown users cost as much as known ones. */
  verifyDummy(password: string): Promise<void>
}

/** argon2id cost parameters (memory in KiB). */
export interface HashCost {
  memoryCost: number
  timeCost: number
}

export const OWASP_MINIMUM: HashCost = { memoryCost: 19456, timeCost: 2 }

/** What computes hashes: `Bun.password`, or a stand-in in tests that count concurrency. */
export interface HashBackend {
  hash(password: string, options: { algorithm: 'argon2id'; memoryCost: number; timeCost: number }): Promise<string>
  verify(password: string, hash: string): Promise<boolean>
}

/** Creates a hasher with a bounded number of concurrent hashes. */
export function createPasswordHasher(
  cost: HashCost = OWASP_MINIMUM,
  maxConcurrent = 2,
  backend: HashBackend = Bun.password,
): PasswordHasher {
  let running = 0
  const waiting: (() => void)[] = []
  async function limited<T>(work: () => Promise<T>): Promise<T> {
    if (running >= maxConcurrent) await new Promise<void>((resolve) => waiting.push(resolve))
    else running++
    try {
      return await work()
    } finally {
      const next = waiting.shift()
      if (next) next()
      else running--
    }
  }
  const hash = (password: string) =>
    limited(() => backend.hash(password, { algorithm: 'argon2id', memoryCost: cost.memoryCost, timeCost: cost.timeCost }))
  let dummy: Promise<string> | undefined
  return {
    hash,
    verify: (password, stored) =>
      limited(async () => {
        try {
          return await backend.verify(password, stored)
        } catch {
          return false // a damaged hash never authenticates
        }
      }),
    async verifyDummy(password) {
      dummy ??= hash('flagd-dummy-password-for-timing')
      const stored = await dummy
      await limited(() => backend.verify(password, stored))
    },
  }
}
