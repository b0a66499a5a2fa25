/** Child process for the crash test: commits changes in a loop and prints each acknowledged one. */

import { openJsonFileStore } from '../../src/storage/json-file-store.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'

const dir = process.argv[2] as string
const start = Number(process.argv[3] ?? 0)
const store = await openJsonFileStore({ dataDir: dir })
let next = start
async function writer(): Promise<never> {
  for (;;) {
    const key = `k${next++}`
    await store.mutate((s) => {
      s.flags[key] = sampleFlag(key, 'x'.repeat(200))
    })
    process.stdout.write(`${key}\n`)
  }
}
process.stdout.write('ready\n')
await Promise.all(Array.from({ length: 8 }, writer))
