/**
 * Segments (docs/targeting.md#rules, docs/ui.md): reusable conditions a rule names with `{"$ref": …}`. The list shows
 * each one in words with the flags and segments that use it; a segment is created or edited with the
 * condition builder (all of / any of) or as JSON, and deleting one that is used is refused with the
 * service's list of its users.
 */

import { useEffect, useState } from 'preact/hooks'
import { describeRule } from '../../domain/targeting/rule-description.ts'
import { api } from './api.ts'
import { ConfirmButton } from './confirm-button.tsx'
import { listenForChanges } from './live.ts'
import { done, type Notice, NoticeLine, refused } from './notice.tsx'
import { link } from './router.ts'
import { RuleJsonEditor, type RuleProblem, ruleProblems } from './rule-json-editor.tsx'
import { asRuleObject } from './rule-model.ts'
import { AttributeSuggestions, blankCondition, ConditionFields } from './rule-rows.tsx'
import { readSegment, type SegmentModel, writeSegment } from './segment-model.ts'

type Segment = { name: string; description: string; rule: unknown; usedBy: string[]; revision: number }
type Editing = {
  original: string | null
  name: string
  description: string
  mode: { kind: 'builder'; model: SegmentModel } | { kind: 'json'; text: string }
}

const fresh = (): Editing => ({
  original: null,
  name: '',
  description: '',
  mode: { kind: 'builder', model: { join: 'and', conditions: [blankCondition()] } },
})
const editingOf = (s: Segment): Editing => {
  const model = readSegment(s.rule)
  return {
    original: s.name,
    name: s.name,
    description: s.description,
    mode: model ? { kind: 'builder', model } : { kind: 'json', text: JSON.stringify(s.rule, null, 2) },
  }
}

export function SegmentsPage({ canWrite }: { canWrite: boolean }) {
  const [segments, setSegments] = useState<Segment[] | null>(null)
  const [editing, setEditing] = useState<Editing>(fresh)
  const [problems, setProblems] = useState<RuleProblem[]>([])
  const [notice, setNotice] = useState<Notice>(null)
  async function load() {
    const { data, error } = await api.GET('/api/segments')
    if (data) setSegments(data as Segment[])
    else setNotice(refused(error))
  }
  useEffect(() => {
    void load()
    // segment changes made elsewhere, and flag changes (a flag that starts or stops using a segment)
    return listenForChanges(() => void load())
  }, [])

  async function save(e: Event) {
    e.preventDefault()
    setProblems([])
    setNotice(null)
    let rule: unknown
    if (editing.mode.kind === 'json') {
      try {
        rule = JSON.parse(editing.mode.text)
      } catch (err) {
        return setProblems([{ field: 'rule', reason: `not JSON: ${(err as Error).message}` }])
      }
    } else rule = writeSegment(editing.mode.model)
    const name = editing.name.trim()
    const ruleObject = asRuleObject(rule)
    if (!ruleObject) return setProblems([{ field: 'rule', reason: 'must be a rule: a JSON object such as {"in": [...]}' }])
    const { data, error, response } = await api.PUT('/api/segments/{segmentName}', {
      params: { path: { segmentName: name } },
      body: { description: editing.description, rule: ruleObject },
    })
    if (!data) {
      setProblems(ruleProblems(error, 'rule'))
      return setNotice(refused(error))
    }
    setNotice(done(response.status === 201 ? `created segment ${name}` : `saved segment ${name}`))
    setEditing(fresh())
    void load()
  }
  async function remove(name: string) {
    const { error } = await api.DELETE('/api/segments/{segmentName}', { params: { path: { segmentName: name } } })
    setNotice(error ? refused(error) : done(`deleted segment ${name}`))
    void load()
  }

  const m = editing.mode
  return (
    <section class="page wide">
      <h1>Segments</h1>
      <p class="meta">
        Reusable conditions: a rule says <code>in segment beta-testers</code> and every flag using it follows when the segment changes.
      </p>
      <NoticeLine notice={notice} />
      {segments === null ? (
        <p>Loading…</p>
      ) : segments.length === 0 ? (
        <p class="meta">No segments yet.</p>
      ) : (
        <ul class="rows" aria-label="Segments">
          {segments.map((s) => (
            <li key={s.name}>
              <span class="name">{s.name}</span>
              {s.description && <span class="meta">{s.description}</span>}
              <span>{describeRule(s.rule)}</span>
              <span class="meta">
                {s.usedBy.length === 0 ? 'Not used' : 'Used by '}
                {s.usedBy.map((u, i) => (
                  <span key={u}>
                    {i > 0 && ', '}
                    <a {...link(`flags/${u}`)}>{u}</a>
                  </span>
                ))}
              </span>
              {canWrite && (
                <div class="actions">
                  <button type="button" class="plain small" aria-label={`Edit ${s.name}`} onClick={() => setEditing(editingOf(s))}>
                    Edit
                  </button>
                  <ConfirmButton
                    quiet
                    label={`Delete ${s.name}`}
                    confirm={`Delete segment ${s.name} for good`}
                    onConfirm={() => remove(s.name)}
                  />
                </div>
              )}
            </li>
          ))}
        </ul>
      )}
      {canWrite && (
        <form class="card" onSubmit={save} aria-label={editing.original ? `Edit segment ${editing.original}` : 'New segment'}>
          <h2>{editing.original ? `Edit ${editing.original}` : 'New segment'}</h2>
          <AttributeSuggestions />
          <div class="field">
            <label for="seg-name">Segment name</label>
            <input
              id="seg-name"
              value={editing.name}
              readOnly={editing.original !== null}
              placeholder="beta-testers"
              onInput={(e) => setEditing({ ...editing, name: e.currentTarget.value })}
            />
          </div>
          <div class="field">
            <label for="seg-description">Segment description</label>
            <input
              id="seg-description"
              value={editing.description}
              onInput={(e) => setEditing({ ...editing, description: e.currentTarget.value })}
            />
          </div>
          {m.kind === 'builder' ? (
            <>
              <div class="field">
                <label for="seg-join">Match</label>
                <select
                  id="seg-join"
                  value={m.model.join}
                  onChange={(e) =>
                    setEditing({
                      ...editing,
                      mode: { kind: 'builder', model: { ...m.model, join: e.currentTarget.value as 'and' | 'or' } },
                    })
                  }
                >
                  <option value="and">all of these conditions</option>
                  <option value="or">any of these conditions</option>
                </select>
              </div>
              {m.model.conditions.map((c, i) => (
                <div class="condition-row" key={i}>
                  <ConditionFields
                    id={`seg-c${i + 1}`}
                    n={i + 1}
                    c={c}
                    segments={(segments ?? []).map((s) => s.name).filter((s) => s !== editing.original)}
                    onChange={(next) =>
                      setEditing({
                        ...editing,
                        mode: {
                          kind: 'builder',
                          model: { ...m.model, conditions: m.model.conditions.map((x, j) => (j === i ? next : x)) },
                        },
                      })
                    }
                  />
                  {m.model.conditions.length > 1 && (
                    <button
                      type="button"
                      class="plain small"
                      aria-label={`Remove condition ${i + 1}`}
                      onClick={() =>
                        setEditing({
                          ...editing,
                          mode: { kind: 'builder', model: { ...m.model, conditions: m.model.conditions.filter((_, j) => j !== i) } },
                        })
                      }
                    >
                      ×
                    </button>
                  )}
                </div>
              ))}
              {problems.map((p, i) => (
                <p key={i} class="error field-error" role="alert">
                  {p.field}: {p.reason}
                </p>
              ))}
            </>
          ) : (
            <RuleJsonEditor
              id="seg-json"
              label="Rule (JSON)"
              root="rule"
              text={m.text}
              problems={problems}
              onInput={(text) => setEditing({ ...editing, mode: { kind: 'json', text } })}
            />
          )}
          <div class="actions">
            <button type="submit">Save segment</button>
            {m.kind === 'builder' ? (
              <>
                <button
                  type="button"
                  class="plain"
                  onClick={() =>
                    setEditing({
                      ...editing,
                      mode: { kind: 'builder', model: { ...m.model, conditions: [...m.model.conditions, blankCondition()] } },
                    })
                  }
                >
                  Add condition
                </button>
                <button
                  type="button"
                  class="plain"
                  onClick={() => setEditing({ ...editing, mode: { kind: 'json', text: JSON.stringify(writeSegment(m.model), null, 2) } })}
                >
                  Edit as JSON
                </button>
              </>
            ) : null}
            {editing.original !== null && (
              <button type="button" class="plain" onClick={() => setEditing(fresh())}>
                Cancel
              </button>
            )}
          </div>
        </form>
      )}
    </section>
  )
}
