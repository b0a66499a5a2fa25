/**
 * docs/ui.md#guarded-rollouts in Chromium: a guard set up on the rollout card and saved with the
 * rollout, the service's refusal shown under the field it names, what the guard sees in words with
 * a chart per check, and axe-core on the card.
 */

import { expect, setDefaultTimeout, test } from 'bun:test'
import { allViolations, clickButton, clickLink, fillByLabel, selectByLabel, visit, waitForText } from '../helpers/ui-driver.ts'
import { browserSuite } from '../helpers/ui-fixture.ts'

// the callbacks below run in the page, where these exist
declare const document: {
  querySelectorAll(selector: string): Iterable<{
    textContent: string | null
    querySelector(s: string): { textContent: string | null } | null
  }>
}

setDefaultTimeout(60_000)
const suite = browserSuite('ui-guard', async (ui) => {
  await ui.api('POST', '/api/flags', { name: 'shop/new-checkout', type: 'BOOLEAN', variants: { on: true, off: false }, value: false })
  await ui.api('POST', '/api/flags', { name: 'shop/watched', type: 'BOOLEAN', variants: { on: true, off: false }, value: false })
  expect((await ui.api('PUT', '/api/environments/production', { protected: true, requiredApprovals: 1 })).status).toBe(201)
  const dev = { username: 'dev', password: 'dev-password-1', permissions: ['flag:read', 'flag:write'] }
  expect((await ui.api('POST', '/api/users', dev)).status).toBe(201)
})
const chromium = suite.chromium
const api = (method: string, path: string, body?: unknown) => suite.ui.api(method, path, body)
const url = () => suite.ui.d.url

test.skipIf(!chromium)('a guard set up on the rollout card is saved with the rollout; a refusal shows at its field', async () => {
  const p = await suite.open(undefined, undefined, undefined, 'flags/shop/new-checkout')
  await waitForText(p, 'No rollout in this environment')
  await waitForText(p, 'No guard: add a check')
  await clickButton(p, 'Add error rate check')
  await clickButton(p, 'Add threshold check')
  await fillByLabel(p, 'Allowed increase (points)', '0.5')
  await fillByLabel(p, 'Counter', 'app.crashes')
  await fillByLabel(p, 'At most', '20')
  await fillByLabel(p, 'In the last (seconds)', '600')
  await fillByLabel(p, 'Samples per arm before deciding (default 200)', '500')
  await selectByLabel(p, 'When a check trips', 'pause')
  // a name OpenTelemetry would not take: refused, named at its field, nothing saved
  await fillByLabel(p, 'Errors counter', '9 errors')
  await clickButton(p, 'Start rollout')
  await p.waitForFunction(
    () =>
      [...document.querySelectorAll('.guard-check .field')].some(
        (f) => f.querySelector('label')?.textContent === 'Errors counter' && (f.querySelector('.field-error')?.textContent ?? '') !== '',
      ),
    { polling: 'mutation' },
  )
  expect(((await (await api('GET', '/api/flags/shop/new-checkout')).json()) as { rollout?: unknown }).rollout).toBeUndefined()

  await fillByLabel(p, 'Errors counter', 'app.errors')
  await clickButton(p, 'Start rollout')
  await waitForText(p, 'rollout saved as revision')
  const flag = (await (await api('GET', '/api/flags/shop/new-checkout')).json()) as { rollout: { guard: unknown } }
  expect(flag.rollout.guard).toEqual({
    checks: [
      { kind: 'error-rate', errors: 'app.errors', total: 'app.requests', maxIncrease: 0.005 },
      { kind: 'threshold', metric: 'app.crashes', max: 20, windowSeconds: 600 },
    ],
    minSamples: 500,
    action: 'pause',
  })
  // the card now says what the guard sees, a chart per check named after its metric
  await waitForText(p, 'Guarded by 2 checks (at least 500 samples per arm, alpha 0.05); pauses when one trips')
  await waitForText(p, 'app.crashes 0 in the last 10 min with the new variant (at most 20)')
  await p.waitForSelector('svg[role="img"][aria-label^="app.errors per app.requests over time"]')
  await p.waitForSelector('svg[role="img"][aria-label^="app.crashes increase over time"]')
  expect(await allViolations(p)).toEqual([])
})

/** An OTLP/JSON report of delta counters, one point per variant: they count as they come, whatever the clocks say. */
function report(flag: string, counts: Record<string, Record<string, number>>): unknown {
  const metrics = Object.entries(counts).map(([name, byVariant]) => ({
    name,
    sum: {
      aggregationTemporality: 1,
      isMonotonic: true,
      dataPoints: Object.entries(byVariant).map(([variant, n]) => ({
        attributes: [
          { key: 'feature_flag.key', value: { stringValue: flag } },
          { key: 'feature_flag.result.variant', value: { stringValue: variant } },
        ],
        asInt: String(n),
      })),
    },
  }))
  return { resourceMetrics: [{ resource: { attributes: [] }, scopeMetrics: [{ scope: { name: 'shop' }, metrics }] }] }
}

test.skipIf(!chromium)('a rollout its guard rolled back says so in words, with a chart of both arms', async () => {
  // the daemon runs on the system clock: a window around it wide enough for any machine, not a timing
  const start = new Date(Date.now() - 3_600_000).toISOString()
  const end = new Date(Date.now() + 86_400_000).toISOString()
  const guard = { checks: [{ kind: 'error-rate', errors: 'app.errors', total: 'app.requests' }], minSamples: 50 }
  const put = await api('PUT', '/api/flags/shop/watched', {
    rollout: { variant: 'on', start, end, fromPercent: 50, toPercent: 100, guard },
  })
  expect(put.status).toBe(200)
  // the new variant fails one request in five, the old one in a hundred
  const sent = await api(
    'POST',
    '/v1/metrics',
    report('shop/watched', { 'app.requests': { on: 1000, off: 1000 }, 'app.errors': { on: 200, off: 10 } }),
  )
  expect(sent.status).toBe(200)

  const p = await suite.open(undefined, undefined, undefined, 'flags/shop/watched')
  await waitForText(p, 'Rolled back by its guard')
  await waitForText(p, 'app.errors 20.0 % with the new variant against 1.0 % without: +19.0 points (')
  await waitForText(p, '; rolled back at ')
  await p.waitForSelector('svg[role="img"][aria-label="app.errors per app.requests over time: new variant 20.0 %, others 1.0 %"]')
  // one burst of reports is one step: each arm is drawn as a dot where its line would end
  await p.waitForSelector('svg[role="img"] circle.treatment')
  await p.waitForSelector('svg[role="img"] circle.control')
  expect(await allViolations(p)).toEqual([])
})

test.skipIf(!chromium)('in a protected environment the guard is requested with its rollout, and the request says it in words', async () => {
  const dev = await suite.open('dev', 'dev-password-1')
  await selectByLabel(dev, 'Environment', 'production')
  await visit(dev, `${url()}/ui/flags/shop/new-checkout`)
  await waitForText(dev, 'Request rollout')
  await clickButton(dev, 'Add error rate check')
  await clickButton(dev, 'Request rollout')
  await waitForText(dev, 'Review changes')
  await clickButton(dev, 'Request approval')
  await waitForText(dev, 'change request made (open)')
  const requests = (await (await api('GET', '/api/change-requests?flag=shop/new-checkout')).json()) as {
    changes: { set: { rollout?: { guard?: unknown } } }[]
  }[]
  expect(requests.map((r) => r.changes[0]?.set.rollout?.guard)).toContainEqual({
    checks: [{ kind: 'error-rate', errors: 'app.errors', total: 'app.requests' }],
    action: 'rollback',
  })
  // nothing served changed until it is approved
  expect(
    ((await (await api('GET', '/api/flags/shop/new-checkout?environment=production')).json()) as { rollout?: unknown }).rollout,
  ).toBeUndefined()
  await visit(dev, `${url()}/ui/change-requests`)
  await clickLink(dev, 'Change shop/new-checkout: rollout')
  await waitForText(dev, 'guarded by 1 check (error-rate of app.errors per app.requests) that rolls it back')
})
