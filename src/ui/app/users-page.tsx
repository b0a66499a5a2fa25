/**
 * Users and their permissions (docs/api.md#authentication, docs/ui.md): the list, a form to add someone, and per user an
 * editor for name, password and permissions, and deletion after a confirmation. Without `user:write`
 * the page only lists.
 */

import { useEffect, useState } from 'preact/hooks'
import { api, type Body, type Permission } from './api.ts'
import { ConfirmButton } from './confirm-button.tsx'
import { Field } from './field.tsx'
import { localTime } from './local-time.ts'
import { done, NoticeLine, refused, useOutcome } from './notice.tsx'
import { PermissionPicker } from './permission-picker.tsx'

type User = { id: string; username: string; permissions: Permission[]; flagPrefixes: string[]; source: string; createdAt: string }
type Form = Required<Body<'createUser'>>

/** The fields of a new or edited user; ids are prefixed so that two forms never share one. */
function UserForm({
  prefix,
  form,
  set,
  errors,
  passwordLabel,
}: {
  prefix: string
  form: Form
  set: (f: Form) => void
  errors: Record<string, string>
  passwordLabel: string
}) {
  return (
    <>
      <Field id={`${prefix}-username`} label="Username" error={errors.username}>
        <input
          id={`${prefix}-username`}
          value={form.username}
          autocomplete="off"
          onInput={(e) => set({ ...form, username: e.currentTarget.value })}
        />
      </Field>
      <Field id={`${prefix}-password`} label={passwordLabel} error={errors.password}>
        <input
          id={`${prefix}-password`}
          type="password"
          autocomplete="new-password"
          value={form.password}
          onInput={(e) => set({ ...form, password: e.currentTarget.value })}
        />
      </Field>
      <Field id={`${prefix}-prefixes`} label="Only flags starting with (comma-separated; empty for all)" error={errors.flagPrefixes}>
        <input
          id={`${prefix}-prefixes`}
          value={form.flagPrefixes.join(', ')}
          placeholder="mobile/, checkout/"
          onInput={(e) =>
            set({
              ...form,
              flagPrefixes: e.currentTarget.value
                .split(',')
                .map((p) => p.trim())
                .filter(Boolean),
            })
          }
        />
      </Field>
      <PermissionPicker
        id={`${prefix}-perm`}
        legend="Permissions"
        value={form.permissions}
        onChange={(permissions) => set({ ...form, permissions })}
        error={errors.permissions}
      />
    </>
  )
}

export function UsersPage({ canWrite, meId }: { canWrite: boolean; meId: string }) {
  const empty: Form = { username: '', password: '', permissions: [], flagPrefixes: [] }
  const [users, setUsers] = useState<User[] | null>(null)
  const [draft, setDraft] = useState<Form>(empty)
  const [editing, setEditing] = useState<{ id: string; form: Form } | null>(null)
  const { errors, setErrors, message, setMessage, refusedWith } = useOutcome()

  async function load() {
    const { data, error } = await api.GET('/api/users')
    if (data) setUsers(data as User[])
    else setMessage(refused(error))
  }
  useEffect(() => void load(), [])

  async function create(e: Event) {
    e.preventDefault()
    setErrors({})
    const { data, error } = await api.POST('/api/users', { body: draft })
    if (!data) return refusedWith(error)
    setMessage(done(`added ${data.username}`))
    setDraft(empty)
    void load()
  }
  async function save(e: Event) {
    e.preventDefault()
    if (!editing) return
    setErrors({})
    const { username, password, permissions, flagPrefixes } = editing.form
    const body: Body<'updateUser'> = { username, permissions, flagPrefixes, ...(password ? { password } : {}) }
    const { data, error } = await api.PUT('/api/users/{userId}', { params: { path: { userId: editing.id } }, body })
    if (!data) return refusedWith(error)
    setMessage(done(`saved ${data.username}`))
    setEditing(null)
    void load()
  }
  async function remove(u: User) {
    const { error } = await api.DELETE('/api/users/{userId}', { params: { path: { userId: u.id } } })
    if (error) return refusedWith(error)
    setMessage(done(`deleted ${u.username}; their sessions have ended`))
    void load()
  }

  return (
    <section class="page">
      <h1>Users</h1>
      <NoticeLine notice={message} />
      {users === null ? (
        <p>Loading…</p>
      ) : (
        <ul class="rows">
          {users.map((u) => (
            <li key={u.id} data-user={u.username}>
              <strong>
                {u.username}
                {u.id === meId && ' (you)'}
              </strong>
              <span class="meta">
                {u.permissions.join(', ') || 'no permissions'}
                {u.flagPrefixes.length > 0 ? ` · only ${u.flagPrefixes.join(', ')}` : ''} ·{' '}
                {u.source === 'oidc' ? 'signs in with SSO (permissions from groups, set again at each sign-in)' : 'password'} · since{' '}
                {localTime(u.createdAt)}
              </span>
              {canWrite && editing?.id === u.id ? (
                <form onSubmit={save} class="card">
                  <UserForm
                    prefix="edit"
                    form={editing.form}
                    set={(form) => setEditing({ id: u.id, form })}
                    errors={errors}
                    passwordLabel="New password (empty keeps it)"
                  />
                  <div class="actions">
                    <button type="submit">Save {u.username}</button>
                    <button
                      type="button"
                      class="plain"
                      onClick={() => {
                        setEditing(null)
                        setErrors({})
                      }}
                    >
                      Cancel
                    </button>
                  </div>
                </form>
              ) : (
                canWrite && (
                  <div class="actions">
                    <button
                      type="button"
                      onClick={() => {
                        setErrors({})
                        setEditing({
                          id: u.id,
                          form: { username: u.username, password: '', permissions: u.permissions, flagPrefixes: u.flagPrefixes },
                        })
                      }}
                    >
                      Edit {u.username}
                    </button>
                    {u.id !== meId && (
                      <ConfirmButton label={`Delete ${u.username}`} confirm={`Delete ${u.username} for good`} onConfirm={() => remove(u)} />
                    )}
                  </div>
                )
              )}
            </li>
          ))}
        </ul>
      )}
      {canWrite && !editing && (
        <form onSubmit={create} class="card">
          <h2>Add a user</h2>
          <UserForm prefix="new" form={draft} set={setDraft} errors={errors} passwordLabel="Password (8 characters or more)" />
          <button type="submit">Add user</button>
        </form>
      )}
    </section>
  )
}
