/**
 * One flag (docs/ui.md), laid out as a team works with it: at the top what it serves now,
 * the Enabled switch and the targeting (in words and in the builder); then its variants and its
 * value and settings (type-aware inputs, saved with If-Match, the service's messages at the
 * fields); then the history with what changed and a rollback to any revision; rename and delete
 * last, quiet and confirmed.
 */

import { useEffect, useRef, useState } from 'preact/hooks'
import { allVariants, type FlagDefinition } from '../../domain/flag.ts'
import { grants } from '../../domain/permission.ts'
import { api, messageOf } from './api.ts'
import { describeChange, type Entry } from './audit-diff.ts'
import { ConfirmButton } from './confirm-button.tsx'
import { EnvironmentSwatch } from './environment-colour.tsx'
import { EnvironmentStates } from './environment-states.tsx'
import { bodyOf, type Draft, draftOf, FlagFields } from './flag-fields.tsx'
import { useNeedsRequest, type WriteOutcome, writeFlag } from './flag-writes.ts'
import { LifecycleFields, LifecycleLine } from './lifecycle-fields.tsx'
import { type LifecycleDraft, lifecycleBody, lifecycleDraftOf } from './lifecycle-words.ts'
import { listenForChanges } from './live.ts'
import { localTime } from './local-time.ts'
import { done, type Notice, NoticeLine, refused, useOutcome } from './notice.tsx'
import { PrerequisitesCard } from './prerequisites-card.tsx'
import { RolloutCard } from './rollout-card.tsx'
import { link, navigate } from './router.ts'
import { type FlagNow, servesNow } from './serves-now.ts'
import { TargetingEditor } from './targeting-editor.tsx'
import { UsageCard } from './usage-card.tsx'
import { VariantsEditor } from './variants-editor.tsx'

export function FlagPage({ name, canWrite, permissions }: { name: string; canWrite: boolean; permissions: readonly string[] }) {
  const [flag, setFlag] = useState<Record<string, unknown> | null>(null)
  const [draft, setDraft] = useState<Draft | null>(null)
  const [life, setLife] = useState<LifecycleDraft>({ kind: 'release', owner: '', tags: '' })
  const [archiveNotice, setArchiveNotice] = useState<Notice>(null)
  const { errors, setErrors, message, setMessage, refusedWith } = useOutcome()
  const [history, setHistory] = useState<Entry[]>([])
  const [newName, setNewName] = useState(name)
  const [segments, setSegments] = useState<string[]>([])
  // in a protected environment, changes of its state are requested (flag-writes.ts)
  const viaRequest = useNeedsRequest(permissions)
  const [scheduleAt, setScheduleAt] = useState('')

  // edits not saved yet: a reload (after any change, pushed live, or the echo of one's own write)
  // must not wipe them. They are saved against the flag they were made from (`base`: its revision
  // goes in If-Match), so saving them over a change made meanwhile is refused rather than undoing it;
  // the rest of the page shows the flag as it is now.
  const edited = useRef(false)
  const base = useRef<Record<string, unknown> | null>(null)
  const edit = (next: Draft) => {
    edited.current = true
    setDraft(next)
  }
  const editLife = (next: LifecycleDraft) => {
    edited.current = true
    setLife(next)
  }

  async function load() {
    const { data, error } = await api.GET('/api/flags/{flagName}', { params: { path: { flagName: name } } })
    if (!data) return setMessage(refused(error))
    setFlag(data as Record<string, unknown>)
    if (!edited.current) {
      base.current = data as Record<string, unknown>
      setDraft(draftOf(data as Record<string, unknown>))
      setLife(lifecycleDraftOf(data as Record<string, unknown>))
    }
    const audit = await api.GET('/api/audit', { params: { query: { flag: name, limit: 50 } } })
    if (audit.data) setHistory(audit.data as Entry[])
    const listed = await api.GET('/api/segments')
    if (listed.data) setSegments((listed.data as { name: string }[]).map((x) => x.name))
  }
  useEffect(() => {
    void load()
    return listenForChanges((type, c) => (type.startsWith('segment.') || c.name === name) && void load())
  }, [name])

  /** Shows what a write did: saved, requested (a protected environment), or the service's refusal. */
  function outcome(result: WriteOutcome, saved: (revision: number) => string) {
    if ('error' in result) return refusedWith(result.error)
    if ('saved' in result) setMessage(done(saved(result.saved)))
    else setMessage(done(`change request made (${result.requested.state}): see Change requests`))
    void load()
  }
  async function save(e: Event) {
    e.preventDefault()
    if (!draft || !flag) return
    setErrors({})
    setMessage(null)
    const at = scheduleAt ? new Date(scheduleAt).toISOString() : undefined
    const result = await writeFlag(base.current ?? flag, { ...bodyOf(draft), ...lifecycleBody(life) }, viaRequest, at)
    if (!('error' in result)) edited.current = false // written (or requested): the next load shows what is
    outcome(result, (r) => `saved as revision ${r}`)
  }
  async function rename() {
    const { data, error } = await api.PUT('/api/flags/{flagName}', {
      params: { path: { flagName: name } },
      body: { name: newName },
    })
    if (!data) return setMessage(refused(error))
    navigate(`flags/${newName}`)
  }
  async function remove() {
    const { error } = await api.DELETE('/api/flags/{flagName}', { params: { path: { flagName: name } } })
    if (error) return setMessage(refused(error))
    navigate('')
  }
  /** Archives the flag (docs/api.md#archive); a refusal (required by other flags) is shown beside the button. */
  async function archive() {
    const { data, error } = await api.POST('/api/flags/{flagName}/archive', { params: { path: { flagName: name } } })
    setArchiveNotice(
      data
        ? done(`${name} archived: see Archived flags to restore it`)
        : refused({ error: { message: `${name} cannot be archived: ${messageOf(error)}` } }),
    )
    void load()
  }
  async function restore() {
    const { data, error } = await api.POST('/api/flags/{flagName}/restore', { params: { path: { flagName: name } } })
    const notice = data ? done(`${name} restored: applications get it again`) : refused(error)
    setMessage(notice)
    setArchiveNotice(notice)
    void load()
  }
  async function setEnabled(enabled: boolean) {
    if (!flag) return
    outcome(await writeFlag(flag, { enabled }, viaRequest), () =>
      enabled ? 'enabled: applications get its value and rules' : 'disabled: applications use their own default',
    )
  }
  async function rollback(revision: number) {
    const { data, error } = await api.POST('/api/rollbacks', { body: { name, revision } })
    setMessage(data ? done(`rolled back to revision ${revision}: now revision ${(data as { revision: number }).revision}`) : refused(error))
    void load()
  }

  const enabled = flag?.enabled !== false
  // variants, renaming and deleting change every environment: the unscoped permission
  const canShared = grants(permissions, 'flag:write')
  if (!flag || !draft)
    return (
      <section class="page">
        {message ? (
          <p class="error" role="alert">
            {message.text}
          </p>
        ) : (
          <p>Loading…</p>
        )}
      </section>
    )
  return (
    <section class="page flag">
      <p>
        <a
          href="/ui/"
          onClick={(e) => {
            e.preventDefault()
            navigate('')
          }}
        >
          ← All flags
        </a>
      </p>
      <h1>{name}</h1>
      <p class="meta">
        {String(flag.type)} · revision {String(flag.revision)} · updated{' '}
        <time dateTime={String(flag.updatedAt)} title={String(flag.updatedAt)}>
          {localTime(String(flag.updatedAt))}
        </time>
        {flag.description ? ` · ${String(flag.description)}` : ''}
      </p>
      <LifecycleLine flag={flag} />
      {flag.archived === true && (
        <div class="card archived-note" role="note" aria-label="Archived">
          <p>
            <strong>Archived.</strong> Every application gets FLAG_NOT_FOUND for it; its definition, its state in every environment, its
            usage and its history are kept. Restore it to change or serve it again.
          </p>
          {canShared && (
            <button type="button" onClick={restore}>
              Restore
            </button>
          )}
        </div>
      )}
      <div class="card now">
        <div class="enabled">
          <button
            type="button"
            role="switch"
            aria-checked={enabled}
            aria-label="Enabled"
            aria-describedby="enabled-meaning"
            class={enabled ? 'switch on' : 'switch'}
            disabled={!canWrite}
            onClick={() => setEnabled(!enabled)}
          />
          <span class="state">{enabled ? 'Enabled' : 'Disabled'}</span>
        </div>
        <p class="meta" id="enabled-meaning">
          {enabled
            ? 'Applications get its value and rules. Switch off to make every application use its own default: a kill switch that keeps the whole configuration.'
            : 'Every application gets its own default (OFREP reason DISABLED); value, variants and rules are kept. Switch on to serve them again.'}
        </p>
        <p class="serves">
          {servesNow(flag as unknown as FlagNow, Date.now())}{' '}
          <a {...link(`evaluate?flag=${encodeURIComponent(name)}`)}>Evaluate for a context</a>
        </p>
      </div>
      <NoticeLine notice={message} />
      <EnvironmentStates name={name} revision={flag.revision as number} permissions={permissions} onCopied={load} />
      <TargetingEditor
        revision={flag.revision as number}
        rule={flag.targeting}
        variants={Object.keys(allVariants(flag as unknown as FlagDefinition))}
        splitVariants={listedOrAll(flag)}
        segments={segments}
        canWrite={canWrite}
        onSaved={load}
        write={(body) => writeFlag(flag, body, viaRequest)}
        viaRequest={viaRequest}
      />
      <RolloutCard flag={flag} canWrite={canWrite} viaRequest={viaRequest} write={(body) => writeFlag(flag, body, viaRequest)} />
      <PrerequisitesCard flag={flag} canWrite={canShared} onSaved={load} />
      <UsageCard name={name} revision={flag.revision as number} />
      <VariantsEditor flag={flag} canWrite={canShared} onSaved={load} />
      <section class="card" aria-labelledby="settings-title">
        <h2 id="settings-title">Value and settings</h2>
        <form onSubmit={save}>
          <FlagFields d={draft} set={edit} errors={errors} disabled={!canWrite} />
          <LifecycleFields d={life} set={editLife} errors={errors} disabled={!canShared} />
          {canWrite && (
            <div class="actions">
              {viaRequest && (
                <span class="field inline">
                  <label for="f-schedule">Schedule (optional)</label>
                  <input id="f-schedule" type="datetime-local" value={scheduleAt} onInput={(e) => setScheduleAt(e.currentTarget.value)} />
                </span>
              )}
              <button type="submit">{viaRequest ? 'Request change' : 'Save'}</button>
            </div>
          )}
        </form>
      </section>
      <h2>History</h2>
      <ol class="history">
        {history.map((e) => (
          <li key={e.id}>
            <span>
              {localTime(e.at)} · {e.actor.name} ({e.source}) · revision {e.revision} ·{' '}
              <span class={e.environment ? 'chip env' : 'chip'}>
                {e.environment && <EnvironmentSwatch name={e.environment} />}
                {e.environment ? `in ${e.environment}` : 'every environment'}
              </span>
            </span>
            <span class="diff">{describeChange(e)}</span>
            {canWrite && e.after && e.revision !== flag.revision && (
              <ConfirmButton
                quiet
                label={`Roll back to revision ${e.revision}`}
                confirm={`Restore revision ${e.revision} now`}
                onConfirm={() => rollback(e.revision as number)}
              />
            )}
          </li>
        ))}
      </ol>
      {canShared && (
        <section class="actions quiet-zone" aria-label="Rename, archive or delete">
          <div class="field">
            <label for="f-rename">New name</label>
            <input id="f-rename" value={newName} onInput={(e) => setNewName(e.currentTarget.value)} />
          </div>
          <button type="button" class="plain" onClick={rename} disabled={newName === name}>
            Rename
          </button>
          {flag.archived !== true && <ConfirmButton quiet label="Archive" confirm={`Archive ${name}`} onConfirm={archive} />}
          <ConfirmButton quiet label="Delete" confirm={`Delete ${name} for good`} onConfirm={remove} />
          <NoticeLine notice={archiveNotice} />
        </section>
      )}
    </section>
  )
}

/** The variants a split offers: the listed ones when there are any (the built-in ones only clutter it), else the built-in ones. */
function listedOrAll(flag: Record<string, unknown>): string[] {
  const listed = flag.variants && typeof flag.variants === 'object' ? Object.keys(flag.variants) : []
  return listed.length > 0 ? listed : Object.keys(allVariants(flag as unknown as FlagDefinition))
}
