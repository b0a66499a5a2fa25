/** The store and audit contract suites on the JSON file store. */

import { rmSync } from 'node:fs'
import { openJsonFileStore } from '../../src/storage/json-file-store.ts'
import { systemClock } from '../../src/system-clock.ts'
import { tempDir } from '../helpers/test-app.ts'
import { describeAuditContract } from './audit-contract.ts'
import { describeStoreContract } from './store-contract.ts'

describeStoreContract(
  'JSON file',
  async () => {
    const dataDir = tempDir()
    let failing = false
    // a disk that is full once told to
    const faults = () => {
      if (failing) throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })
    }
    return {
      dataDir,
      open: () => openJsonFileStore({ now: systemClock, dataDir, faults }),
      destroy: async () => rmSync(dataDir, { recursive: true, force: true }),
      failWrites: () => {
        failing = true
      },
    }
  },
  { failWrites: true },
)

describeAuditContract('JSON file', async () => {
  const dataDir = tempDir()
  return {
    open: (options) => openJsonFileStore({ now: systemClock, dataDir, ...options }),
    destroy: async () => rmSync(dataDir, { recursive: true, force: true }),
  }
})
