/**
 * Child process for the crash test: commits changes in a loop and prints each acknowledged one. A
 * third argument makes checkpoints run after that many journal bytes (a crash then often lands in one).
 */

import { systemPrincipal } from '../../src/domain/principal.ts'
import { openJsonFileStore } from '../../src/storage/json-file-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'

const dir = process.argv[2] as string
const start = Number(process.argv[3] ?? 0)
const checkpointBytes = process.argv[4] === undefined ? undefined : Number(process.argv[4])
const store = await openJsonFileStore({
  now: systemClock,
  dataDir: dir,
  ...(checkpointBytes === undefined ? {} : { checkpoints: { afterBytes: checkpointBytes, afterMs: 0 } }),
})
let next = start
const meta = { principal: systemPrincipal('cli'), source: 'cli' as const, requestId: 'crash' }
async function writer(): Promise<never> {
  for (;;) {
    const key = `k${next++}`
    await store.transact(meta, (tx) => tx.put('flags', sampleFlag(key, 'x'.repeat(200))))
    process.stdout.write(`${key}\n`)
  }
}
process.stdout.write('ready\n')
await Promise.all(Array.from({ length: 8 }, writer))
