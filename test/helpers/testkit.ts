/**
 * flagd-testbed's `testkit-flags.json` as the provider tests use it (the flag that refers to a
 * missing evaluator left out: flagd refuses it at import), and a client's details of one of its
 * flags read with the getter of the flag's type.
 */

import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Client, EvaluationDetails, FlagValue } from '@openfeature/server-sdk'

export const TESTBED = join(import.meta.dir, '../fixtures/openfeature/flagd-testbed/evaluator')

/** The testkit flags document (loaded anew: callers may change their copy). */
export function testkitFlags(): { flags: Record<string, { variants: Record<string, unknown> }> } {
  const testkit = JSON.parse(readFileSync(join(TESTBED, 'flags/testkit-flags.json'), 'utf8'))
  delete testkit.flags['ref-to-nonexistent-evaluator-flag'] // a dangling $ref is refused at import (docs/targeting.md#flagd-format)
  return testkit
}

/** The details of `key` of `testkit` for `context` through `client`, with the getter of the flag's type. */
export async function testkitDetails(
  testkit: ReturnType<typeof testkitFlags>,
  client: Client,
  key: string,
  context: Record<string, unknown>,
): Promise<EvaluationDetails<FlagValue>> {
  const values = Object.values(testkit.flags[key]?.variants ?? {})
  const ctx = context as never
  if (values.every((v) => typeof v === 'boolean')) return client.getBooleanDetails(key, false, ctx)
  if (values.every((v) => typeof v === 'string')) return client.getStringDetails(key, '', ctx)
  if (values.every((v) => typeof v === 'number')) return client.getNumberDetails(key, 0, ctx)
  return client.getObjectDetails(key, {}, ctx)
}
