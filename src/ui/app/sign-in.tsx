/**
 * The sign-in form: fields labelled Username and Password, a button named Sign in (docs/ui.md); with
 * single sign-on configured, a button named after its label too (docs/single-sign-on.md). Coming back
 * from the identity provider, the URL's fragment holds a one-time code (exchanged at once for a
 * session, and removed from the address bar) or the sentence of what went wrong.
 */

import { useEffect, useState } from 'preact/hooks'
import { api, messageOf, session } from './api.ts'

/** What the identity provider's return left in the fragment, taken out of the address bar. */
function takeFragment(): { code?: string; error?: string } {
  const hash = location.hash
  const code = /^#oidc-code=(.+)$/.exec(hash)?.[1]
  const error = /^#oidc-error=(.*)$/.exec(hash)?.[1]
  if (code === undefined && error === undefined) return {}
  history.replaceState(null, '', location.pathname + location.search)
  return code !== undefined ? { code } : { error: decodeURIComponent(error ?? '') || 'single sign-on failed' }
}

export function SignIn({ onSignedIn, notice }: { onSignedIn: () => void; notice?: string | null }) {
  const [username, setUsername] = useState('')
  const [password, setPassword] = useState('')
  const [error, setError] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  const [sso, setSso] = useState<string | null>(null)
  useEffect(() => {
    void api.GET('/api/auth/oidc').then(({ data }) => setSso(data?.enabled ? (data.label ?? 'Sign in with SSO') : null))
    const back = takeFragment()
    if (back.error) setError(back.error)
    if (back.code) {
      setBusy(true)
      void api.POST('/api/auth/oidc/session', { body: { code: back.code } }).then(({ data, error: problem }) => {
        setBusy(false)
        if (!data) return setError(messageOf(problem, 'single sign-on failed: sign in again'))
        session.set(data.token)
        onSignedIn()
      })
    }
  }, [])
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
      {sso && (
        <p class="sso">
          <button type="button" disabled={busy} onClick={() => location.assign('/api/auth/oidc/start')}>
            {sso}
          </button>
        </p>
      )}
    </main>
  )
}
