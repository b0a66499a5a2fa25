/**
 * The environments (docs/environments.md): listed for anyone who may read flags; created (every
 * flag starting as another environment serves it), described, protected and removed by those
 * with `environment:write`. Changes reach the `Environment` switcher at once.
 */

import { useState } from 'preact/hooks'
import { api } from './api.ts'
import { ConfirmButton } from './confirm-button.tsx'
import { type Environment, loadEnvironments, useEnvironments } from './environment-choice.ts'
import { EnvironmentSwatch } from './environment-colour.tsx'
import { done, NoticeLine, refused, useOutcome } from './notice.tsx'
import { link } from './router.ts'

export function EnvironmentsPage({ canWrite, permissions }: { canWrite: boolean; permissions: readonly string[] }) {
  const { list } = useEnvironments()
  const { message, setMessage } = useOutcome()
  const [name, setName] = useState('')
  const [description, setDescription] = useState('')
  const [copyFrom, setCopyFrom] = useState('')

  async function put(env: string, body: Record<string, unknown>, said: string) {
    const { data, error } = await api.PUT('/api/environments/{name}', { params: { path: { name: env } }, body })
    if (!data) return setMessage(refused(error))
    setMessage(done(said))
    await loadEnvironments(permissions)
    return true
  }
  async function create(e: Event) {
    e.preventDefault()
    const made = await put(name, { description, ...(copyFrom ? { copyFrom } : {}) }, `created ${name}`)
    if (made) {
      setName('')
      setDescription('')
    }
  }
  async function remove(env: string) {
    const { error } = await api.DELETE('/api/environments/{name}', { params: { path: { name: env } } })
    if (error) return setMessage(refused(error))
    setMessage(done(`removed ${env}`))
    await loadEnvironments(permissions)
  }
  const row = (e: Environment) => (
    <tr key={e.name}>
      <th scope="row">
        <EnvironmentSwatch name={e.name} />
        {e.name}
      </th>
      <td>{e.description || '–'}</td>
      <td>{e.default ? 'default (config environment)' : ''}</td>
      <td>{e.protected ? `protected, ${e.requiredApprovals} approval(s)` : 'open'}</td>
      {canWrite && (
        <td class="actions">
          <button
            type="button"
            class="plain"
            onClick={() => put(e.name, { protected: !e.protected }, `${e.name} is ${e.protected ? 'open' : 'protected'} now`)}
          >
            {e.protected ? `Unprotect ${e.name}` : `Protect ${e.name}`}
          </button>
          {!e.default && (
            <ConfirmButton quiet label={`Remove ${e.name}`} confirm={`Remove ${e.name} and its states`} onConfirm={() => remove(e.name)} />
          )}
        </td>
      )}
    </tr>
  )
  return (
    <section class="page environments">
      <h1>Environments</h1>
      <p>
        A flag is defined once and served differently in each environment. <a {...link('compare')}>Compare</a> two to promote a release.
      </p>
      <table>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Description</th>
            <th scope="col">Default</th>
            <th scope="col">Changes</th>
            {canWrite && <th scope="col">Actions</th>}
          </tr>
        </thead>
        <tbody>{list.map(row)}</tbody>
      </table>
      <NoticeLine notice={message} />
      {canWrite && (
        <form class="card" onSubmit={create} aria-labelledby="new-environment">
          <h2 id="new-environment">New environment</h2>
          <div class="field">
            <label for="env-name">Name</label>
            <input id="env-name" value={name} required onInput={(e) => setName(e.currentTarget.value)} placeholder="staging" />
          </div>
          <div class="field">
            <label for="env-description">Description</label>
            <input id="env-description" value={description} onInput={(e) => setDescription(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="env-copy-from">Start as</label>
            <select id="env-copy-from" value={copyFrom} onChange={(e) => setCopyFrom(e.currentTarget.value)}>
              <option value="">the default environment</option>
              {list.map((e) => (
                <option key={e.name} value={e.name}>
                  {e.name}
                </option>
              ))}
            </select>
          </div>
          <div class="actions">
            <button type="submit">Create environment</button>
          </div>
        </form>
      )}
    </section>
  )
}
