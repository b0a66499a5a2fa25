/** A valid stored flag for storage tests. */

import type { Flag } from '../../src/domain/flag.ts'
import { type FlagRow, flagIn } from '../../src/domain/flag-row.ts'

/** A STRING flag row named `name` whose default is `value` (its id is derived from the name), with a state in environment `development`. */
export function sampleFlag(name: string, value = '', revision = 1): FlagRow {
  const at = '2026-11-22T10:15:00.123Z'
  return {
    id: `flg_${name.replaceAll('/', '_')}`,
    name,
    type: 'STRING',
    description: '',
    defaultValue: value,
    states: { development: { valueExists: false } },
    createdAt: at,
    updatedAt: at,
    revision,
  }
}

/** `sampleFlag` as environment `development` sees it. */
export function sampleView(name: string, value = '', revision = 1): Flag {
  return flagIn(sampleFlag(name, value, revision), 'development')
}
