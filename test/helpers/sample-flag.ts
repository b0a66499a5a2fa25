/** A valid stored flag for storage tests. */

import type { Flag } from '../../src/domain/flag.ts'

/** A STRING flag named `name` whose default is `value` (its id is derived from the name). */
export function sampleFlag(name: string, value = '', revision = 1): Flag {
  const at = '2026-11-22T10:15:00.123Z'
  return {
    id: `flg_${name.replaceAll('/', '_')}`,
    name,
    type: 'STRING',
    description: '',
    defaultValue: value,
    valueExists: false,
    createdAt: at,
    updatedAt: at,
    revision,
  }
}
