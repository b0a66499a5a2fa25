/**
 * A flag's targeting (docs/ui.md): the rule in words, and an editor: the builder for the shapes it
 * can show exactly (rules in order, a split, a default), the JSON editor for anything else, with
 * the service's messages at their places. A rule the builder cannot show opens as JSON and is saved
 * only as the person wrote it. Saved with `If-Match`, so a change made elsewhere meanwhile is not
 * overwritten.
 */

import { useEffect, useState } from 'preact/hooks'
import type { WriteOutcome } from './flag-writes.ts'
import { done, type Notice, NoticeLine, refused } from './notice.tsx'
import { RuleJsonEditor, type RuleProblem, ruleProblems } from './rule-json-editor.tsx'
import { asRuleObject, readTargeting, type TargetingModel, writeTargeting } from './rule-model.ts'
import { AttributeSuggestions, blankCondition, RuleGroup } from './rule-rows.tsx'
import { targetingInWords } from './rule-words.ts'
import { SplitFields } from './split-fields.tsx'

type Mode = { kind: 'builder'; model: TargetingModel } | { kind: 'json'; text: string }

const jsonOf = (rule: unknown) => (rule === undefined || rule === null ? '' : JSON.stringify(rule, null, 2))
const modeOf = (rule: unknown): Mode => {
  const model = readTargeting(rule ?? null)
  return model ? { kind: 'builder', model } : { kind: 'json', text: jsonOf(rule) }
}

/** The problems that belong to rule `k` (its condition or its Serve), by the service's paths. */
const ruleError = (problems: RuleProblem[], k: number) =>
  problems.find((p) => p.field.startsWith(`targeting.if[${2 * k}]`) || p.field === `targeting.if[${2 * k + 1}]`)?.reason

export function TargetingEditor({
  revision,
  rule,
  variants,
  splitVariants = variants,
  segments,
  canWrite,
  onSaved,
  write,
  viaRequest = false,
}: {
  revision: number
  rule: unknown
  /** Every variant a rule may serve. */
  variants: string[]
  /** The variants a new split offers (a split already saved shows its own too). */
  splitVariants?: string[]
  segments: string[]
  canWrite: boolean
  onSaved: () => void
  /** How the rule is saved: directly, or as a change request in a protected environment (flag-writes.ts). */
  write: (body: Record<string, unknown>) => Promise<WriteOutcome>
  viaRequest?: boolean
}) {
  const [mode, setMode] = useState<Mode>(() => modeOf(rule))
  const [dirty, setDirty] = useState(false)
  const [problems, setProblems] = useState<RuleProblem[]>([])
  const [notice, setNotice] = useState<Notice>(null)
  const key = JSON.stringify(rule ?? null)
  // a change made elsewhere shows at once, unless this person is editing (their save then meets If-Match)
  useEffect(() => {
    if (!dirty) setMode(modeOf(rule))
  }, [key, revision])

  const edit = (next: Mode) => {
    setMode(next)
    setDirty(true)
  }
  const setModel = (model: TargetingModel) => edit({ kind: 'builder', model })

  async function save() {
    setProblems([])
    setNotice(null)
    let next: unknown
    if (mode.kind === 'json') {
      try {
        next = mode.text.trim() === '' ? null : JSON.parse(mode.text)
      } catch (err) {
        return setProblems([{ field: 'targeting', reason: `not JSON: ${(err as Error).message}` }])
      }
    } else next = writeTargeting(mode.model)
    const targeting = next === null ? null : asRuleObject(next)
    if (targeting === undefined) return setProblems([{ field: 'targeting', reason: 'must be a rule: a JSON object such as {"if": [...]}' }])
    const result = await write({ targeting })
    if ('error' in result) {
      setProblems(ruleProblems(result.error, 'targeting'))
      return setNotice(refused(result.error))
    }
    setDirty(false)
    setNotice(
      done(
        'saved' in result
          ? `targeting saved as revision ${result.saved}`
          : `change request made (${result.requested.state}): see Change requests`,
      ),
    )
    onSaved()
  }

  const words = targetingInWords(rule)
  const disabled = !canWrite
  const asJson = mode.kind === 'json' ? mode.text : jsonOf(writeTargeting(mode.model))
  let parsedJson: unknown
  try {
    parsedJson = mode.kind === 'json' ? (mode.text.trim() === '' ? null : JSON.parse(mode.text)) : undefined
  } catch {
    parsedJson = undefined
  }
  const builderFits = mode.kind === 'json' && parsedJson !== undefined && readTargeting(parsedJson) !== undefined
  return (
    <section class="card targeting" aria-label="Targeting">
      <h2>Targeting</h2>
      {words.length === 0 ? (
        <p class="meta">No rule: every application gets the flag's value.</p>
      ) : (
        <ul class="in-words" aria-label="Targeting in words">
          {words.map((w, i) => (
            <li key={i}>{w}</li>
          ))}
        </ul>
      )}
      <AttributeSuggestions />
      {mode.kind === 'builder' ? (
        <>
          {mode.model.rules.map((r, k) => (
            <RuleGroup
              key={k}
              index={k}
              count={mode.model.rules.length}
              rule={r}
              variants={variants}
              segments={segments}
              disabled={disabled}
              error={ruleError(problems, k)}
              onChange={(next) => setModel({ ...mode.model, rules: mode.model.rules.map((x, j) => (j === k ? next : x)) })}
              onRemove={() => setModel({ ...mode.model, rules: mode.model.rules.filter((_, j) => j !== k) })}
              onMove={(to) => {
                const rules = [...mode.model.rules]
                const [moved] = rules.splice(k, 1)
                rules.splice(to, 0, moved as (typeof rules)[number])
                setModel({ ...mode.model, rules })
              }}
            />
          ))}
          {canWrite && (
            <div class="actions">
              <button
                type="button"
                class="plain"
                onClick={() =>
                  setModel({ ...mode.model, rules: [...mode.model.rules, { conditions: [blankCondition()], serve: variants[0] ?? '' }] })
                }
              >
                Add rule
              </button>
              {!mode.model.split && (
                <button type="button" class="plain" onClick={() => setModel({ ...mode.model, split: { by: '', weights: [] } })}>
                  Add split
                </button>
              )}
            </div>
          )}
          {mode.model.split && (
            <SplitFields
              split={mode.model.split}
              variants={splitVariants}
              disabled={disabled}
              onChange={(split) => setModel({ ...mode.model, split })}
            />
          )}
          <div class="field">
            <label for="targeting-default">Default</label>
            <select
              id="targeting-default"
              value={mode.model.fallback}
              disabled={disabled}
              onChange={(e) => setModel({ ...mode.model, fallback: e.currentTarget.value })}
            >
              <option value="">the flag's own value (reason DEFAULT)</option>
              {[...new Set([...variants, mode.model.fallback].filter((v) => v !== ''))].map((v) => (
                <option key={v} value={v}>
                  {v}
                </option>
              ))}
            </select>
          </div>
          <p class="meta">
            {mode.model.split
              ? 'Default: served when the split cannot place a user (the context has no such attribute).'
              : 'Default: served when no rule matches.'}
          </p>
          {problems
            .filter((p) => !/^targeting\.if\[\d+\]/.test(p.field) || mode.model.rules.length === 0)
            .map((p, i) => (
              <p key={i} class="error field-error" role="alert">
                {p.field}: {p.reason}
              </p>
            ))}
        </>
      ) : (
        <>
          {!builderFits && parsedJson !== null && <p class="meta">The builder cannot show this rule exactly; it is kept as written.</p>}
          <RuleJsonEditor
            id="targeting-json"
            label="Rule (JSON)"
            root="targeting"
            text={mode.text}
            problems={problems}
            disabled={disabled}
            onInput={(text) => edit({ kind: 'json', text })}
          />
        </>
      )}
      <NoticeLine notice={notice} />
      {canWrite && (
        <div class="actions">
          <button type="button" onClick={save}>
            {viaRequest ? 'Request change' : 'Save targeting'}
          </button>
          {mode.kind === 'builder' ? (
            <button type="button" class="plain" onClick={() => setMode({ kind: 'json', text: asJson })}>
              Edit as JSON
            </button>
          ) : (
            <button
              type="button"
              class="plain"
              disabled={!builderFits}
              onClick={() => setMode({ kind: 'builder', model: readTargeting(parsedJson) as TargetingModel })}
            >
              Use the builder
            </button>
          )}
          {dirty && (
            <button
              type="button"
              class="plain"
              onClick={() => {
                setDirty(false)
                setProblems([])
                setMode(modeOf(rule))
              }}
            >
              Discard changes
            </button>
          )}
        </div>
      )}
    </section>
  )
}
