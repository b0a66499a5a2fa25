/**
 * A flag's targeting (docs/ui.md#targeting-without-json): the rule in words with an `Edit` button
 * that opens an editor (`Cancel` returns to the words unsaved): the builder for the shapes it
 * can show exactly (rules in order, a split, a default), the JSON editor for anything else, with
 * the service's messages at their places. A rule the builder cannot show opens as JSON and is saved
 * only as the person wrote it. Saved with `If-Match`, so a change made elsewhere meanwhile is not
 * overwritten.
 */

import { useEffect, useState } from 'preact/hooks'
import { type WriteOutcome, writtenInWords } from './flag-writes.ts'
import { done, type Notice, NoticeLine, refused } from './notice.tsx'
import { RuleBuilder } from './rule-builder.tsx'
import { RuleJsonEditor, type RuleProblem, ruleProblems } from './rule-json-editor.tsx'
import { asRuleObject, readTargeting, type TargetingModel, writeTargeting } from './rule-model.ts'
import { AttributeSuggestions } from './rule-rows.tsx'
import { targetingInWords } from './rule-words.ts'

type Mode = { kind: 'builder'; model: TargetingModel } | { kind: 'json'; text: string }

const jsonOf = (rule: unknown) => (rule === undefined || rule === null ? '' : JSON.stringify(rule, null, 2))
const modeOf = (rule: unknown): Mode => {
  const model = readTargeting(rule ?? null)
  return model ? { kind: 'builder', model } : { kind: 'json', text: jsonOf(rule) }
}

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
  // the rule shows in words; the builder (or the JSON editor) only after `Edit`
  const [editing, setEditing] = useState(false)
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
  /** Back to the rule in words, the edits dropped (docs/ui.md#targeting-without-json). */
  const cancel = () => {
    setEditing(false)
    setDirty(false)
    setProblems([])
    setMode(modeOf(rule))
  }

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
    setEditing(false)
    setNotice(done(writtenInWords(result, (r) => `targeting saved as revision ${r}`)))
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
      {editing && <AttributeSuggestions />}
      {editing &&
        (mode.kind === 'builder' ? (
          <RuleBuilder
            model={mode.model}
            variants={variants}
            splitVariants={splitVariants}
            segments={segments}
            disabled={disabled}
            problems={problems}
            onChange={(model) => edit({ kind: 'builder', model })}
          />
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
        ))}
      <NoticeLine notice={notice} />
      {canWrite && !editing && (
        <div class="actions">
          <button type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
        </div>
      )}
      {canWrite && editing && (
        <div class="actions">
          <button type="button" onClick={save}>
            {viaRequest ? 'Request targeting change' : 'Save targeting'}
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
          <button type="button" class="plain" onClick={cancel}>
            Cancel
          </button>
        </div>
      )}
    </section>
  )
}
