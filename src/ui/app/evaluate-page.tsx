/**
 * The evaluate console (contract §13, §17): evaluates one flag through OFREP, exactly as an
 * application's SDK would, for a targeting key and an optional context, and shows value, reason and
 * variant (or OFREP's error code and details).
 */

import { useEffect, useState } from 'preact/hooks'
import { api, messageOf } from './api.ts'

type Answer = {
  key: string
  value?: unknown
  reason?: string
  variant?: string
  metadata?: { revision?: number }
  errorCode?: string
  errorDetails?: string
}

export function EvaluatePage({ canList }: { canList: boolean }) {
  const [names, setNames] = useState<string[]>([])
  const [key, setKey] = useState('')
  const [targetingKey, setTargetingKey] = useState('')
  const [extra, setExtra] = useState('')
  const [answer, setAnswer] = useState<Answer | null>(null)
  const [problem, setProblem] = useState<string | null>(null)
  useEffect(() => {
    if (canList) void api.GET('/api/flags').then(({ data }) => data && setNames((data as { name: string }[]).map((f) => f.name)))
  }, [canList])

  async function evaluate(e: Event) {
    e.preventDefault()
    setProblem(null)
    setAnswer(null)
    let context: Record<string, unknown> = {}
    if (extra.trim()) {
      try {
        context = JSON.parse(extra)
      } catch (err) {
        return setProblem(`Context is not JSON: ${(err as Error).message}`)
      }
    }
    if (targetingKey) context = { ...context, targetingKey }
    const { data, error } = await api.POST('/ofrep/v1/evaluate/flags/{key}', { params: { path: { key } }, body: { context } })
    const body = (data ?? error) as Answer | undefined
    if (body && 'key' in body) setAnswer(body)
    else setProblem(messageOf(error))
  }

  return (
    <section class="page">
      <h1>Evaluate a flag</h1>
      <p class="meta">Asks the service through OFREP, as an application's OpenFeature SDK does.</p>
      <form onSubmit={evaluate}>
        <div class="field">
          <label for="ev-key">Flag</label>
          <input id="ev-key" list="ev-names" value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
          <datalist id="ev-names">
            {names.map((n) => (
              <option key={n} value={n} />
            ))}
          </datalist>
        </div>
        <div class="field">
          <label for="ev-targeting">Targeting key</label>
          <input
            id="ev-targeting"
            value={targetingKey}
            onInput={(e) => setTargetingKey(e.currentTarget.value)}
            placeholder="user-42 (A/B tests split on it)"
          />
        </div>
        <div class="field">
          <label for="ev-context">More context (JSON object, optional)</label>
          <textarea id="ev-context" rows={3} value={extra} onInput={(e) => setExtra(e.currentTarget.value)} placeholder='{"plan": "pro"}' />
        </div>
        <button type="submit">Evaluate</button>
      </form>
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      {answer && (
        <dl class="answer" aria-label="Evaluation result">
          {answer.errorCode ? (
            <>
              <dt>Error</dt>
              <dd>
                <code>{answer.errorCode}</code>
              </dd>
              <dt>Details</dt>
              <dd>{answer.errorDetails}</dd>
            </>
          ) : (
            <>
              <dt>Value</dt>
              <dd>
                <code>{JSON.stringify(answer.value)}</code>
              </dd>
              <dt>Reason</dt>
              <dd>
                <code>{answer.reason}</code>
              </dd>
              <dt>Variant</dt>
              <dd>
                <code>{answer.variant}</code>
              </dd>
              <dt>Revision</dt>
              <dd>{answer.metadata?.revision}</dd>
            </>
          )}
        </dl>
      )}
    </section>
  )
}
