/**
 * docs/targeting.md#flagd-format: every evaluator scenario of OpenFeature's flagd-testbed (`evaluator/gherkin/*.feature`,
 * run as they are) through the OpenFeature server SDK with an OFREP provider on
 * `@openfeature/ofrep-core` 2.x, against a daemon that imported `testkit-flags.json`. Left out, as docs/targeting.md#flagd-format
 * names them: `@fractional-v1` (retired bucketing), `@fractional-v3` (not yet in flagd), the scenario of
 * `ref-to-nonexistent-evaluator-flag` (a dangling `$ref` is refused at write, so that flag is left out
 * of the import), and "Returns no metadata" (OFREP metadata always carries `type` and `revision`).
 */

import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { type Client, type EvaluationDetails, type FlagValue, OpenFeature } from '@openfeature/server-sdk'
import { parseFeature, type Scenario } from '../helpers/gherkin.ts'
import { OfrepServerProvider } from '../helpers/ofrep-server-provider.ts'
import { type ServedApp, serveApp } from '../helpers/served-app.ts'
import { createTestApp, type TestApp } from '../helpers/test-app.ts'

const testbed = join(import.meta.dir, '../fixtures/openfeature/flagd-testbed/evaluator')
const DANGLING = 'ref-to-nonexistent-evaluator-flag'
const skipped = (s: Scenario) =>
  s.tags.includes('@fractional-v1') ||
  s.tags.includes('@fractional-v3') ||
  s.steps.some((step) => step.text.includes(`"${DANGLING}"`)) ||
  s.name.startsWith('Returns no metadata')

const scenarios = readdirSync(join(testbed, 'gherkin'))
  .filter((f) => f.endsWith('.feature'))
  .sort()
  .flatMap((f) => parseFeature(readFileSync(join(testbed, 'gherkin', f), 'utf8')).map((s) => ({ ...s, file: f })))

let t: TestApp
let served: ServedApp
let client: Client
beforeAll(async () => {
  t = await createTestApp()
  const testkit = JSON.parse(readFileSync(join(testbed, 'flags/testkit-flags.json'), 'utf8'))
  delete testkit.flags[DANGLING]
  const imported = await t.req('PUT', '/api/migrations', { token: t.adminToken, body: testkit })
  expect(imported.status).toBe(200)
  served = serveApp(t)
  const token = (await t.req('POST', '/api/tokens', { token: t.adminToken, body: { name: 'testbed', permissions: ['flag:evaluate'] } }))
    .body.token
  await OpenFeature.setProviderAndWait('testbed', new OfrepServerProvider({ baseUrl: served.base, headers: [['X-API-Key', token]] }))
  client = OpenFeature.getClient('testbed')
})
afterAll(async () => {
  await OpenFeature.close()
  await served?.stop()
  await t?.close()
})

/** A table value read as the step's type says. */
function typed(type: string, text: string): FlagValue {
  switch (type) {
    case 'Boolean':
      return text === 'true'
    case 'Integer':
    case 'Float':
      return Number(text)
    case 'Object':
      return JSON.parse(text.replaceAll('\\"', '"'))
    default:
      return text
  }
}

async function run(s: Scenario): Promise<void> {
  let flag: { type: string; key: string; fallback: FlagValue } | undefined
  const context: Record<string, unknown> = {}
  let details: EvaluationDetails<FlagValue> | undefined
  for (const { text, table } of s.steps) {
    let m: RegExpExecArray | null
    if (text === 'an evaluator') continue
    if ((m = /^a (\w+)-flag with key "([^"]*)" and a fallback value "(.*)"$/.exec(text))) {
      flag = { type: m[1] as string, key: m[2] as string, fallback: typed(m[1] as string, m[3] as string) }
    } else if ((m = /^a context containing a key "([^"]*)", with type "(\w+)" and with value "(.*)"$/.exec(text))) {
      context[m[1] as string] = typed(m[2] as string, m[3] as string)
    } else if ((m = /^a context containing a targeting key with value "(.*)"$/.exec(text))) {
      context.targetingKey = m[1]
    } else if (
      (m = /^a context containing a nested property with outer key "([^"]*)" and inner key "([^"]*)", with value "(.*)"$/.exec(text))
    ) {
      context[m[1] as string] = { ...((context[m[1] as string] as object) ?? {}), [m[2] as string]: m[3] }
    } else if (text === 'the flag was evaluated with details') {
      const f = flag as NonNullable<typeof flag>
      const ctx = context as never
      if (f.type === 'Boolean') details = await client.getBooleanDetails(f.key, f.fallback as boolean, ctx)
      else if (f.type === 'String') details = await client.getStringDetails(f.key, f.fallback as string, ctx)
      else if (f.type === 'Integer' || f.type === 'Float') details = await client.getNumberDetails(f.key, f.fallback as number, ctx)
      else details = await client.getObjectDetails(f.key, f.fallback as never, ctx)
    } else if ((m = /^the resolved details value should be "(.*)"$/.exec(text))) {
      expect(details?.value).toEqual(typed((flag as { type: string }).type, m[1] as string))
    } else if ((m = /^the reason should be "(.*)"$/.exec(text))) {
      expect(details?.reason).toBe(m[1] as string)
    } else if ((m = /^the error-code should be "(.*)"$/.exec(text))) {
      expect(details?.errorCode as string).toBe(m[1] as string)
    } else if (text === 'the resolved metadata should contain') {
      for (const [key, type, value] of (table ?? []).slice(1))
        expect(details?.flagMetadata[key as string] as unknown).toEqual(typed(type as string, value as string))
    } else throw new Error(`step not understood: ${text}`)
  }
}

describe('flagd-testbed evaluator scenarios through the OpenFeature server SDK and OFREP', () => {
  for (const s of scenarios) {
    const name = `${s.file}: ${s.name}`
    if (skipped(s)) test.skip(name, () => {})
    else test(name, () => run(s))
  }

  test('the scenarios left out are exactly those docs/targeting.md#flagd-format names', () => {
    const left = scenarios.filter(skipped)
    expect(
      left.every(
        (s) =>
          s.tags.includes('@fractional-v1') || s.steps.some((st) => st.text.includes(DANGLING)) || s.name.startsWith('Returns no metadata'),
      ),
    ).toBe(true)
    expect(scenarios.length - left.length).toBeGreaterThan(90)
  })
})
