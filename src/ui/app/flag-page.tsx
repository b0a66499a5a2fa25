/**
 * One flag (docs/ui.md#a-flags-page), laid out as a team works with it: its name, then one tab per
 * environment (on/off and pending requests there) that chooses the environment the rest shows: what
 * it serves now and the Enabled switch; then, side by side on a wide window, what a person edits
 * (targeting in words with `Edit`, variants, value and settings saved with If-Match, the service's
 * messages at the fields) beside what happened and happens (rollout and pending requests, history
 * with rollback, usage, prerequisites, every environment's state); rename, archive and delete last,
 * quiet and confirmed.
 */

import { useEffect, useRef, useState } from 'preact/hooks'
import { allVariants, type FlagDefinition } from '../../domain/flag.ts'
import { grants } from '../../domain/permission.ts'
import { api } from './api.ts'
import type { Entry } from './audit-diff.ts'
import { useEnvironments } from './environment-choice.ts'
import { EnvironmentStates } from './environment-states.tsx'
import { ENVIRONMENT_PANEL, EnvironmentTabs, tabId } from './environment-tabs.tsx'
import { bodyOf, type Draft, draftOf, FlagFields } from './flag-fields.tsx'
import { FlagHeader } from './flag-header.tsx'
import { FlagHistory } from './flag-history.tsx'
import { FlagNowCard } from './flag-now-card.tsx'
import { FlagQuietZone } from './flag-quiet-zone.tsx'
import { useFlagStates } from './flag-states.ts'
import { useNeedsRequest, type WriteOutcome, writeFlag, writtenInWords } from './flag-writes.ts'
import { rollBack, rollbackTarget, useDefaultEnvironment } from './history-rollback.ts'
import { LifecycleFields } from './lifecycle-fields.tsx'
import { type LifecycleDraft, lifecycleBody, lifecycleDraftOf } from './lifecycle-words.ts'
import { listenForChanges } from './live.ts'
import { done, type Notice, NoticeLine, refused, useOutcome } from './notice.tsx'
import { PrerequisitesCard } from './prerequisites-card.tsx'
import { QuickRollout } from './quick-rollout.tsx'
import { RolloutCard } from './rollout-card.tsx'
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
  const [segments, setSegments] = useState<string[]>([])
  // every environment's state and pending requests, read again with each load (a change elsewhere, one's own write)
  const [loads, setLoads] = useState(0)
  const { states, pending } = useFlagStates(name, loads)
  const { list, current } = useEnvironments()
  // in a protected environment, changes of its state are requested (flag-writes.ts)
  const viaRequest = useNeedsRequest(permissions)
  const [scheduleAt, setScheduleAt] = useState('')
  const defaultEnvironment = useDefaultEnvironment()

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
    setLoads((n) => n + 1)
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
    setMessage(done(writtenInWords(result, saved)))
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
    // a save that moved nothing keeps the revision: say so, since the other cards save on their own (docs/ui.md#a-flags-page)
    const before = (base.current ?? flag).revision
    outcome(result, (r) =>
      r === before
        ? `nothing to save: these fields are as saved (revision ${r}); variants and targeting save with Save variants and Save targeting`
        : `saved as revision ${r}`,
    )
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
  async function rollOut(body: Record<string, unknown>) {
    if (!flag) return
    outcome(await writeFlag(flag, body, viaRequest), (r) => `rolled out: saved as revision ${r}`)
  }
  // in a protected environment, reviewed first (history-rollback.ts)
  async function rollback(entry: Entry) {
    // a shared entry restores the environment the page shows, not another one (docs/ui.md#review-before-protected-changes)
    const result = await rollBack(name, entry, rollbackTarget(entry, current ?? defaultEnvironment))
    if ('cancelled' in result) return
    if ('error' in result) setMessage(refused(result.error))
    else if ('requested' in result) setMessage(done(writtenInWords(result, (r) => `rolled back as revision ${r}`)))
    else setMessage(done(`rolled back to revision ${entry.revision}${current ? ` in ${current}` : ''}: now revision ${result.rolledBack}`))
    void load()
  }

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
  // the environment's part of the page is the tabs' panel, labelled by the chosen tab (when there are tabs)
  const tabbed = current !== undefined && list.some((e) => grants(permissions, 'flag:read', e.name))
  const panel = tabbed ? { role: 'tabpanel' as const, id: ENVIRONMENT_PANEL, 'aria-labelledby': tabId(current) } : {}
  return (
    <section class="page flag">
      <FlagHeader name={name} flag={flag} canRestore={canShared} onRestore={restore} />
      <EnvironmentTabs permissions={permissions} states={states} pending={pending} />
      <div class="flag-panel" {...panel}>
        <FlagNowCard name={name} flag={flag} canWrite={canWrite} onEnabled={setEnabled} />
        <QuickRollout flag={flag} canWrite={canWrite} onRollOut={rollOut} />
        <NoticeLine notice={message} />
        <div class="flag-columns">
          <div class="flag-column">
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
                        <input
                          id="f-schedule"
                          type="datetime-local"
                          value={scheduleAt}
                          onInput={(e) => setScheduleAt(e.currentTarget.value)}
                        />
                      </span>
                    )}
                    <button type="submit">{viaRequest ? 'Request change' : 'Save'}</button>
                  </div>
                )}
              </form>
            </section>
          </div>
          <div class="flag-column">
            <RolloutCard flag={flag} canWrite={canWrite} viaRequest={viaRequest} write={(body) => writeFlag(flag, body, viaRequest)} />
            <FlagHistory history={history} revision={flag.revision} canWrite={canWrite} onRollback={rollback} />
            <UsageCard name={name} revision={flag.revision as number} />
            <PrerequisitesCard flag={flag} canWrite={canShared} onSaved={load} />
            <EnvironmentStates name={name} states={states} permissions={permissions} onCopied={load} />
          </div>
        </div>
      </div>
      {canShared && (
        <FlagQuietZone
          name={name}
          archived={flag.archived === true}
          notice={archiveNotice}
          onChanged={(notice) => {
            setArchiveNotice(notice)
            void load()
          }}
          onRefused={setMessage}
        />
      )}
    </section>
  )
}

/** The variants a split offers: the listed ones when there are any (the built-in ones only clutter it), else the built-in ones. */
function listedOrAll(flag: Record<string, unknown>): string[] {
  const listed = flag.variants && typeof flag.variants === 'object' ? Object.keys(flag.variants) : []
  return listed.length > 0 ? listed : Object.keys(allVariants(flag as unknown as FlagDefinition))
}
