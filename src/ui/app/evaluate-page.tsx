/**
 * The evaluate console (docs/openfeature.md#ofrep, docs/ui.md, docs/targeting.md#rules): evaluates one flag for a context, given as
 * JSON or as attribute rows, and shows value, variant and reason, and, for a person who may read
 * flags, the steps that decided it in words ("why this value", `POST /api/flags/{name}/evaluate`).
 * The answer shown is OFREP's, exactly what an application's SDK gets.
 */

import { useEffect, useState } from 'preact/hooks'
import type { TraceStep } from '../../domain/targeting/rule-evaluation.ts'
import { api, messageOf } from './api.ts'
import { stepInWords } from './rule-words.ts'

type Answer = {
  key: string
  value?: unknown
  reason?: string
  variant?: string
  metadata?: { revision?: number }
  errorCode?: string
  errorDetails?: string
  trace?: (TraceStep & { text?: string })[]
}
type Row = { name: string; value: string }

/** A row's value as JSON when it reads as JSON (42, true, "x", [1]), else as the text typed. */
const rowValue = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export function EvaluatePage({ canList }: { canList: boolean }) {
  const [names, setNames] = useState<string[]>([])
  const [key, setKey] = useState(() => new URLSearchParams(location.search).get('flag') ?? '')
  const [asRows, setAsRows] = useState(false)
  const [json, setJson] = useState('')
  const [rows, setRows] = useState<Row[]>([{ name: 'targetingKey', value: 'user-42' }])
  const [answer, setAnswer] = useState<Answer | null>(null)
  const [problem, setProblem] = useState<string | null>(null)
  useEffect(() => {
    if (canList) void api.GET('/api/flags').then(({ data }) => data && setNames((data as { name: string }[]).map((f) => f.name)))
  }, [canList])

  function contextOf(): Record<string, unknown> | undefined {
    if (asRows) return Object.fromEntries(rows.filter((r) => r.name.trim() !== '').map((r) => [r.name.trim(), rowValue(r.value)]))
    if (json.trim() === '') return {}
    try {
      const parsed = JSON.parse(json)
      if (parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed)) return parsed
      setProblem('Context must be a JSON object, like {"targetingKey": "user-42"}')
    } catch (err) {
      setProblem(`Context is not JSON: ${(err as Error).message}`)
    }
    return undefined
  }

  async function evaluate(e: Event) {
    e.preventDefault()
    setProblem(null)
    setAnswer(null)
    const context = contextOf()
    if (!context) return
    // the answer is OFREP's, exactly what an application gets; the steps behind it come from "why
    // this value" for a person who may read flags
    const { data, error } = await api.POST('/ofrep/v1/evaluate/flags/{key}', { params: { path: { key } }, body: { context } })
    const body = (data ?? error) as Answer | undefined
    if (!body || !('key' in body)) return setProblem(messageOf(error))
    if (canList && body.errorCode !== 'FLAG_NOT_FOUND') {
      const why = await api.POST('/api/flags/{flagName}/evaluate', { params: { path: { flagName: key } }, body: { context } })
      const trace = (why.data as Answer | undefined)?.trace
      if (trace) body.trace = trace
    }
    setAnswer(body)
  }
  function switchTo(rowsMode: boolean) {
    // carry the context across, so switching loses nothing that can be carried
    if (rowsMode) {
      const context = contextOf()
      if (!context) return
      setRows(Object.entries(context).map(([name, v]) => ({ name, value: typeof v === 'string' ? v : JSON.stringify(v) })))
    } else {
      setJson(JSON.stringify(contextOf() ?? {}, null, 2))
    }
    setProblem(null)
    setAsRows(rowsMode)
  }

  return (
    <section class="page">
      <h1>Evaluate a flag</h1>
      <p class="meta">Asks the service what an application would get for this context, and why.</p>
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
        {asRows ? (
          <fieldset class="context-rows">
            <legend>Context</legend>
            {rows.map((r, i) => (
              <div class="value-row" key={i}>
                <label class="sr-only" for={`ev-attr-${i}`}>{`Attribute ${i + 1}`}</label>
                <input
                  id={`ev-attr-${i}`}
                  placeholder="email"
                  value={r.name}
                  onInput={(e) => setRows(rows.map((x, j) => (j === i ? { ...x, name: e.currentTarget.value } : x)))}
                />
                <label class="sr-only" for={`ev-value-${i}`}>{`Value ${i + 1}`}</label>
                <input
                  id={`ev-value-${i}`}
                  placeholder="ada@example.com"
                  value={r.value}
                  onInput={(e) => setRows(rows.map((x, j) => (j === i ? { ...x, value: e.currentTarget.value } : x)))}
                />
                <button
                  type="button"
                  class="plain small"
                  aria-label={`Remove attribute ${i + 1}`}
                  onClick={() => setRows(rows.filter((_, j) => j !== i))}
                >
                  ×
                </button>
              </div>
            ))}
            <p class="meta">A value that reads as JSON (42, true, [1, 2]) is sent as such; anything else as text.</p>
            <div class="actions">
              <button type="button" class="plain small" onClick={() => setRows([...rows, { name: '', value: '' }])}>
                Add attribute
              </button>
              <button type="button" class="plain small" onClick={() => switchTo(false)}>
                Context as JSON
              </button>
            </div>
          </fieldset>
        ) : (
          <div class="field">
            <label for="ev-context">Context (JSON)</label>
            <textarea
              id="ev-context"
              rows={5}
              value={json}
              spellcheck={false}
              placeholder={'{"targetingKey": "user-42", "email": "ada@example.com"}'}
              onInput={(e) => setJson(e.currentTarget.value)}
            />
            <button type="button" class="plain small" onClick={() => switchTo(true)}>
              Context as attribute rows
            </button>
          </div>
        )}
        <div class="actions">
          <button type="submit">Evaluate</button>
        </div>
      </form>
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
      {answer && <Result answer={answer} />}
    </section>
  )
}

function Result({ answer }: { answer: Answer }) {
  return (
    <section class="card result" aria-label="Result" aria-live="polite">
      <dl class="answer">
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
              <code>{'value' in answer ? JSON.stringify(answer.value) : "none: the application's own default"}</code>
            </dd>
            <dt>Variant</dt>
            <dd>
              <code>{answer.variant ?? '—'}</code>
            </dd>
            <dt>Reason</dt>
            <dd>
              <code>{answer.reason}</code>
            </dd>
            <dt>Revision</dt>
            <dd>{answer.metadata?.revision}</dd>
          </>
        )}
      </dl>
      {answer.trace && (
        <>
          <h2>Why</h2>
          <ol class="trace">
            {answer.trace.map((s, i) => (
              <li key={i}>{stepInWords(s)}</li>
            ))}
            {answer.trace.length === 0 && <li>{whyWithoutRule(answer)}</li>}
          </ol>
        </>
      )}
    </section>
  )
}

/** The reason in words when no rule ran. */
function whyWithoutRule(a: Answer): string {
  switch (a.reason) {
    case 'DISABLED':
      return 'The flag is disabled: every application uses its own default.'
    case 'STATIC':
      return 'The flag has no rule: everyone gets its value.'
    case 'SPLIT':
      return 'An A/B test without a rule: the targetingKey decides A or B.'
    default:
      return "No rule decided: the flag's default applies."
  }
}
