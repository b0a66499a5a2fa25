/** The sign-in form: fields labelled Username and Password, a button named Sign in (docs/ui.md). */

import { useState } from 'preact/hooks'
import { api, messageOf, session } from './api.ts'

export function SignIn({ onSignedIn, notice }: { onSignedIn: () => void; notice?: string | null }) {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  async function submit(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    const { data, error: problem } = await api.POST('/api/login', { body: { username, password } })
    setBusy(false)
    if (!data) return setError(messageOf(problem, 'sign-in failed'))
    session.set(data.token)
    onSignedIn()
  }
  return (
    <main class="sign-in">
      <h1>flagd</h1>
      {notice && (
        <p class="note" role="status">
          {notice}
        </p>
      )}
      <form onSubmit={submit}>
        <label for="username">Username</label>
        <input
          id="username"
          name="username"
          autocomplete="username"
          value={username}
          onInput={(e) => setUsername(e.currentTarget.value)}
          required
        />
        <label for="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autocomplete="current-password"
          value={password}
          onInput={(e) => setPassword(e.currentTarget.value)}
          required
        />
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  )
}
