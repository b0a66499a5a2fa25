/**
 * What a rollout's guard sees (docs/ui.md#guarded-rollouts), on the rollout card: where the rollout
 * stands from `GET /api/flags/{name}/rollout`, each check in a sentence, and each check's arms over
 * time from `GET /api/flags/{name}/impact`. Read again when the flag changes (a trip is a change,
 * pushed live) and every 15 s while a guard watches.
 */

import { useEffect, useState } from 'preact/hooks'
import type { Guard } from '../../domain/rollout-guard.ts'
import { api } from './api.ts'
import { GuardChart } from './guard-chart.tsx'
import { chartMetrics, checkSeries, type Impact, stepFor } from './guard-series.ts'
import { checkInWords, guardSummary, type RolloutReading, statusInWords } from './guard-words.ts'

const REFRESH_MS = 15_000

/** What the guard of a flag's rollout sees; `haltShown` when the card already says that the rollout stopped. */
export function GuardReading({
  name,
  revision,
  variant,
  guard,
  since,
  haltShown,
}: {
  name: string
  revision: unknown
  variant: string
  guard: Guard
  since: string
  haltShown: boolean
}) {
  const [reading, setReading] = useState<RolloutReading | null>(null)
  const [impacts, setImpacts] = useState<Record<string, Impact | undefined>>({})
  useEffect(() => {
    let stopped = false
    async function load() {
      const path = { flagName: name }
      const r = (await api.GET('/api/flags/{flagName}/rollout', { params: { path } })).data as RolloutReading | undefined
      const from = Date.parse(since)
      const step = stepFor(Math.max(0, (Date.now() - from) / 1000))
      const metrics = [...new Set(guard.checks.flatMap(chartMetrics))]
      const got = await Promise.all(
        metrics.map(async (metric) => {
          const query = { metric, since: new Date(from).toISOString(), step }
          return (await api.GET('/api/flags/{flagName}/impact', { params: { path, query } })).data as Impact | undefined
        }),
      )
      if (stopped) return
      setReading(r ?? null)
      setImpacts(Object.fromEntries(metrics.map((m, i) => [m, got[i]])))
    }
    void load()
    const timer = setInterval(() => void load(), REFRESH_MS)
    return () => {
      stopped = true
      clearInterval(timer)
    }
  }, [name, revision, since, JSON.stringify(guard)])
  const status = reading && !haltShown ? statusInWords(reading) : null
  return (
    <div class="guard-reading">
      {status && (
        <p class="guard-halt" role="status">
          {status}.
        </p>
      )}
      <p class="meta">{guardSummary(guard)}.</p>
      <ul class="guard-checks">
        {guard.checks.map((check, i) => {
          const label =
            check.kind === 'error-rate'
              ? `${check.errors} per ${check.total}`
              : check.kind === 'mean'
                ? `${check.histogram} mean`
                : `${check.metric} increase`
          return (
            <li key={`${i}-${check.kind}`} class={reading?.guard?.checks[i]?.state === 'tripped' ? 'tripped' : undefined}>
              <p>
                {checkInWords(check, reading?.guard?.checks[i], {
                  status: reading?.status ?? 'running',
                  guard: reading?.guard ?? null,
                  minSamples: guard.minSamples,
                })}
                .
              </p>
              <GuardChart label={label} series={checkSeries(check, variant, impacts)} rate={check.kind === 'error-rate'} />
            </li>
          )
        })}
      </ul>
    </div>
  )
}
