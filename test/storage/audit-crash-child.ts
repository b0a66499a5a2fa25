/**
 * Child process for the audit crash test: eight writers change ten flags over and over (each change
 * a new revision, sometimes a rename) and print each acknowledged change as "<id> <name> <revision>".
 */

import type { FlagRow } from '../../src/domain/flag-row.ts'
import { systemPrincipal } from '../../src/domain/principal.ts'
import { openJsonFileStore } from '../../src/storage/json-file-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { sampleFlag } from '../helpers/sample-flag.ts'

const dir = process.argv[2] as string
const store = await openJsonFileStore({ now: systemClock, dataDir: dir })
const meta = { principal: systemPrincipal('cli'), source: 'cli' as const, requestId: 'audit-crash' }
const ids = Array.from({ length: 10 }, (_, i) => `flg_crash${i}`)
let n = 0
async function writer(): Promise<never> {
  for (;;) {
    const id = ids[n++ % ids.length] as string
    const out = await store.transact(meta, (tx) => {
      const current = tx.read.row('flags', id)
      const name = `crash/${id}/${n % 3 === 0 ? 'renamed' : 'plain'}`
      const next: FlagRow = current
        ? { ...current, name, description: `change ${n}`, revision: current.revision + 1 }
        : { ...sampleFlag(name, 'x'), id }
      tx.put('flags', next)
      return next
    })
    process.stdout.write(`${out.result.id} ${out.result.name} ${out.result.revision}\n`)
  }
}
process.stdout.write('ready\n')
await Promise.all(Array.from({ length: 8 }, writer))
