/**
 * The last part of a flag's page (docs/ui.md#lifecycle-archive-and-prerequisites): rename, archive and
 * delete, quiet and confirmed; they change the flag in every environment, so while one is protected
 * archive and delete are reviewed first (flag-retirement.ts). A refusal (archiving a flag others
 * require) shows beside the buttons in the service's words.
 */

import { useState } from 'preact/hooks'
import { api, messageOf } from './api.ts'
import { ConfirmButton } from './confirm-button.tsx'
import { retireFlag } from './flag-retirement.ts'
import { done, type Notice, NoticeLine, refused } from './notice.tsx'
import { navigate } from './router.ts'

export function FlagQuietZone({
  name,
  archived,
  notice,
  onChanged,
  onRefused,
}: {
  name: string
  archived: boolean
  /** What the last archive or restore did (a restore is made at the top of the page). */
  notice: Notice
  onChanged: (notice: Notice) => void
  onRefused: (notice: Notice) => void
}) {
  const [newName, setNewName] = useState(name)
  async function rename() {
    const { data, error } = await api.PUT('/api/flags/{flagName}', {
      params: { path: { flagName: name } },
      body: { name: newName },
    })
    if (!data) return onRefused(refused(error))
    navigate(`flags/${newName}`)
  }
  /** What a delete or archive request made says, beside the buttons. */
  const requested = (r: { requested: { state: string }; environment: string }) =>
    done(`change request made in ${r.environment} (${r.requested.state}): see Change requests`)
  async function remove() {
    const result = await retireFlag(name, 'delete')
    if ('cancelled' in result) return
    if ('error' in result) return onRefused(refused(result.error))
    if ('requested' in result) return onChanged(requested(result))
    navigate('')
  }
  /** Archives the flag (docs/api.md#archive); a refusal (required by other flags) is shown beside the button. */
  async function archive() {
    const result = await retireFlag(name, 'archive')
    if ('cancelled' in result) return
    onChanged(
      'done' in result
        ? done(`${name} archived: see Archived flags to restore it`)
        : 'requested' in result
          ? requested(result)
          : refused({ error: { message: `${name} cannot be archived: ${messageOf(result.error)}` } }),
    )
  }
  return (
    <section class="actions quiet-zone" aria-label="Rename, archive or delete">
      <div class="field">
        <label for="f-rename">New name</label>
        <input id="f-rename" value={newName} onInput={(e) => setNewName(e.currentTarget.value)} />
      </div>
      <button type="button" class="plain" onClick={rename} disabled={newName === name}>
        Rename
      </button>
      {!archived && <ConfirmButton quiet label="Archive" confirm={`Archive ${name}`} onConfirm={archive} />}
      <ConfirmButton quiet label="Delete" confirm={`Delete ${name} for good`} onConfirm={remove} />
      <NoticeLine notice={notice} />
    </section>
  )
}
