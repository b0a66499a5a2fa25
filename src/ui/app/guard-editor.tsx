/**
 * A guard set up on the rollout card (docs/ui.md#guarded-rollouts): checks of the three kinds added
 * and removed, the samples each arm needs, alpha and the action; saved with the rollout in the
 * card's own write, with the service's reason under the field it names (`rollout.guard.checks[0].errors`).
 */

import type { GuardCheck } from '../../domain/rollout-guard.ts'
import { Field } from './field.tsx'
import { type CheckDraft, type GuardDraft, newCheck } from './guard-draft.ts'

const KINDS: { kind: GuardCheck['kind']; label: string }[] = [
  { kind: 'error-rate', label: 'error rate' },
  { kind: 'mean', label: 'mean (latency)' },
  { kind: 'threshold', label: 'threshold' },
]

/** The fields of one check's kind: its key in the API, its label, and its input's kind. */
const FIELDS: Record<GuardCheck['kind'], { key: keyof CheckDraft; label: string; number?: boolean }[]> = {
  'error-rate': [
    { key: 'errors', label: 'Errors counter' },
    { key: 'total', label: 'Requests counter' },
    { key: 'maxIncrease', label: 'Allowed increase (points)', number: true },
  ],
  mean: [
    { key: 'histogram', label: 'Histogram' },
    { key: 'maxIncrease', label: "Allowed increase (the metric's unit)", number: true },
  ],
  threshold: [
    { key: 'metric', label: 'Counter' },
    { key: 'max', label: 'At most', number: true },
    { key: 'windowSeconds', label: 'In the last (seconds)', number: true },
  ],
}

/** The guard's part of the rollout form: its checks, samples, alpha and action, each with the service's reason. */
export function GuardEditor({
  draft,
  onChange,
  errors,
}: {
  draft: GuardDraft
  onChange: (next: GuardDraft) => void
  errors: Record<string, string>
}) {
  const setCheck = (i: number, patch: Partial<CheckDraft>) =>
    onChange({ ...draft, checks: draft.checks.map((c, j) => (j === i ? { ...c, ...patch } : c)) })
  const err = (field: string) => errors[`rollout.guard.${field}`]
  return (
    <fieldset class="guard-editor">
      <legend>Guard</legend>
      <p class="meta">
        {draft.checks.length === 0
          ? 'No guard: add a check to stop the rollout by itself when the new variant does worse.'
          : 'Checks on the metrics your application exports over OTLP, labelled with feature_flag.key and feature_flag.result.variant.'}
      </p>
      {err('checks') && (
        <p class="error field-error" role="alert">
          {err('checks')}
        </p>
      )}
      {draft.checks.map((c, i) => (
        <fieldset key={i} class="guard-check">
          <legend>Check {i + 1}</legend>
          <Field id={`gc-${i}-kind`} label="Kind" error={err(`checks[${i}].kind`)}>
            <select id={`gc-${i}-kind`} value={c.kind} onChange={(e) => setCheck(i, newCheck(e.currentTarget.value as GuardCheck['kind']))}>
              {KINDS.map((k) => (
                <option key={k.kind} value={k.kind}>
                  {k.label}
                </option>
              ))}
            </select>
          </Field>
          {FIELDS[c.kind].map((f) => (
            <Field key={f.key} id={`gc-${i}-${f.key}`} label={f.label} error={err(`checks[${i}].${f.key}`)}>
              <input
                id={`gc-${i}-${f.key}`}
                type={f.number ? 'number' : 'text'}
                step={f.number ? 'any' : undefined}
                value={c[f.key]}
                onInput={(e) => setCheck(i, { [f.key]: e.currentTarget.value })}
              />
            </Field>
          ))}
          <button type="button" class="plain" onClick={() => onChange({ ...draft, checks: draft.checks.filter((_, j) => j !== i) })}>
            Remove check {i + 1}
          </button>
        </fieldset>
      ))}
      {draft.checks.length < 5 && (
        <div class="actions">
          {KINDS.map((k) => (
            <button
              key={k.kind}
              type="button"
              class="plain"
              onClick={() => onChange({ ...draft, checks: [...draft.checks, newCheck(k.kind)] })}
            >
              Add {k.label} check
            </button>
          ))}
        </div>
      )}
      {draft.checks.length > 0 && (
        <div class="guard-settings">
          <Field id="guard-min-samples" label="Samples per arm before deciding (default 200)" error={err('minSamples')}>
            <input
              id="guard-min-samples"
              type="number"
              min="10"
              step="1"
              value={draft.minSamples}
              onInput={(e) => onChange({ ...draft, minSamples: e.currentTarget.value })}
            />
          </Field>
          <Field id="guard-alpha" label="Alpha, the chance of a false trip (default 0.05)" error={err('alpha')}>
            <input
              id="guard-alpha"
              type="number"
              step="any"
              value={draft.alpha}
              onInput={(e) => onChange({ ...draft, alpha: e.currentTarget.value })}
            />
          </Field>
          <Field id="guard-action" label="When a check trips" error={err('action')}>
            <select
              id="guard-action"
              value={draft.action}
              onChange={(e) => onChange({ ...draft, action: e.currentTarget.value as GuardDraft['action'] })}
            >
              <option value="rollback">roll back (the new variant to no one)</option>
              <option value="pause">pause (keep the share where it is)</option>
            </select>
          </Field>
        </div>
      )}
    </fieldset>
  )
}
