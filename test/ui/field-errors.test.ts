/** The service's refusals by field (src/ui/app/field-errors.ts), without a browser. */

import { expect, test } from 'bun:test'
import { fieldErrors } from '../../src/ui/app/field-errors.ts'

test('fields named like built-in properties of objects keep their own reasons', () => {
  const names = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf']
  const got = fieldErrors({ error: { details: { errors: names.map((field) => ({ field, reason: `bad ${field}` })) } } })
  for (const name of names) expect(Object.hasOwn(got, name) ? got[name] : undefined, name).toBe(`bad ${name}`)
  // the first reason of a field is the one shown
  const single = fieldErrors({ error: { details: { field: 'toString', reason: 'first', errors: [] } } })
  expect(Object.getOwnPropertyDescriptor(single, 'toString')?.value).toBe('first')
})
