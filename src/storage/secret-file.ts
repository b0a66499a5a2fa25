/**
 * The token-signing secret when none is configured: 32 random bytes generated on first start into
 * `<dataDir>/jwt-secret` with mode 0600, then reused so tokens survive restarts.
 */

import { randomBytes } from 'node:crypto'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { writeFileAtomic } from '../io/atomic-write.ts'

/** Returns the secret stored in the data directory, creating it on first use. */
export async function loadOrCreateSecret(dataDir: string): Promise<string> {
  const path = join(dataDir, 'jwt-secret')
  try {
    const text = (await readFile(path, 'utf8')).trim()
    if (!/^[0-9a-f]{64}$/.test(text))
      throw new Error(`secret file ${path} is damaged; delete it to generate a new one (all tokens will end)`)
    return text
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err
  }
  const secret = randomBytes(32).toString('hex')
  await writeFileAtomic(path, `${secret}\n`)
  return secret
}
