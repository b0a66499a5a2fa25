/** The store contract suite on the JSON file store. */

import { rmSync } from 'node:fs'
import { openJsonFileStore } from '../../src/storage/json-file-store.ts'
import { tempDir } from '../helpers/test-app.ts'
import { describeStoreContract } from './store-contract.ts'

describeStoreContract('JSON file', async () => {
  const dataDir = tempDir()
  return {
    dataDir,
    open: () => openJsonFileStore({ dataDir }),
    destroy: async () => rmSync(dataDir, { recursive: true, force: true }),
  }
})
