/**
 * A rule as JSON (docs/ui.md): a text area with the service's validation messages listed under it,
 * each naming its line and selecting the offending part on request. The text is sent as typed.
 */

import { useRef } from 'preact/hooks'
import { locate } from './json-locate.ts'

/** A problem the service named: its path in the rule and its reason. */
export interface RuleProblem {
  field: string
  reason: string
}

export function RuleJsonEditor({
  id,
  label,
  root,
  text,
  problems,
  onInput,
  disabled,
}: {
  id: string
  label: string
  /** The field name the service gives the rule (`targeting`, `rule`). */
  root: string
  text: string
  problems: RuleProblem[]
  onInput: (text: string) => void
  disabled?: boolean | undefined
}) {
  const area = useRef<HTMLTextAreaElement>(null)
  const located = problems.map((p) => ({ ...p, span: p.field.startsWith(root) ? locate(text, root, p.field) : undefined }))
  const show = (start: number, end: number) => {
    area.current?.focus()
    area.current?.setSelectionRange(start, end)
  }
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea
        ref={area}
        id={id}
        class="json"
        spellcheck={false}
        rows={Math.min(24, Math.max(6, text.split('\n').length + 1))}
        value={text}
        disabled={disabled}
        aria-invalid={problems.length > 0 ? 'true' : undefined}
        aria-describedby={problems.length > 0 ? `${id}-problems` : undefined}
        onInput={(e) => onInput(e.currentTarget.value)}
      />
      {located.length > 0 && (
        <ul class="problems error" id={`${id}-problems`} role="alert">
          {located.map((p, i) => (
            <li key={`${p.field}-${i}`}>
              {p.span ? `line ${p.span.line}, ` : ''}
              <code>{p.field}</code>: {p.reason}
              {p.span && (
                <>
                  {' '}
                  <button
                    type="button"
                    class="link"
                    aria-label={`Show where: ${p.field}`}
                    onClick={() => show((p.span as { start: number }).start, (p.span as { end: number }).end)}
                  >
                    show
                  </button>
                </>
              )}
            </li>
          ))}
        </ul>
      )}
    </div>
  )
}

/** The problems of a refusal: its field errors, or its message as one problem at the root. */
export function ruleProblems(error: unknown, root: string): RuleProblem[] {
  const details = (error as { error?: { message?: string; details?: { field?: string; reason?: string; errors?: RuleProblem[] } } })?.error
  const list =
    details?.details?.errors ?? (details?.details?.field ? [{ field: details.details.field, reason: details.details.reason ?? '' }] : [])
  return list.length > 0 ? list : [{ field: root, reason: details?.message ?? 'the service refused the rule' }]
}
