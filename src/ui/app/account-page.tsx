/**
 * One's own account (docs/api.md#permissions): anyone signed in may change their own password, proving it with
 * the current one; the service's message for a wrong one appears next to that field.
 */

import { useState } from 'preact/hooks'
import { api } from './api.ts'
import { Field } from './field.tsx'
import { done, NoticeLine, useOutcome } from './notice.tsx'

export function AccountPage({ meId, username, permissions }: { meId: string; username: string; permissions: readonly string[] }) {
  const [currentPassword, setCurrent] = useState('')
  const [password, setPassword] = useState('')
  const { errors, setErrors, message, setMessage, refusedWith } = useOutcome()
  async function change(e: Event) {
    e.preventDefault()
    setErrors({})
    const { data, error } = await api.PUT('/api/users/{userId}', {
      params: { path: { userId: meId } },
      body: { password, currentPassword },
    })
    if (!data) {
      refusedWith(error)
      return
    }
    setCurrent('')
    setPassword('')
    setMessage(done('password changed'))
  }
  return (
    <section class="page">
      <h1>{username}</h1>
      <p class="meta">Permissions: {permissions.join(', ') || 'none'}</p>
      <form onSubmit={change} class="card">
        <h2>Change your password</h2>
        <Field id="acc-current" label="Current password" error={errors.currentPassword}>
          <input
            id="acc-current"
            type="password"
            autocomplete="current-password"
            value={currentPassword}
            onInput={(e) => setCurrent(e.currentTarget.value)}
            required
          />
        </Field>
        <Field id="acc-new" label="New password" error={errors.password}>
          <input
            id="acc-new"
            type="password"
            autocomplete="new-password"
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
            required
          />
        </Field>
        <NoticeLine notice={message} />
        <button type="submit">Change password</button>
      </form>
    </section>
  )
}
