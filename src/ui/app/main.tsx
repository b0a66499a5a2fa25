/** The web UI (contract §17): sign in, then the flags; sign out ends the session. */

import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, session } from './api.ts'
import { FlagList } from './flag-list.tsx'
import { SignIn } from './sign-in.tsx'
import './styles.css'

type Me = { username?: string; name?: string; permissions: string[] }

function App() {
  const [me, setMe] = useState<Me | null>(null)
  const [signedIn, setSignedIn] = useState(Boolean(session.token))
  useEffect(() => {
    if (!signedIn) return
    void api.GET('/api/me').then(({ data }) => {
      if (data) setMe(data as Me)
      else {
        session.set(null)
        setSignedIn(false)
      }
    })
  }, [signedIn])
  async function signOut() {
    await api.POST('/api/logout')
    session.set(null)
    setMe(null)
    setSignedIn(false)
  }
  if (!signedIn) return <SignIn onSignedIn={() => setSignedIn(true)} />
  if (!me) return <p>Loading…</p>
  const can = (p: string) => me.permissions.includes(p)
  return (
    <div class="app">
      <header>
        <strong>flagd</strong>
        <span class="who">{me.username ?? me.name}</span>
        <button type="button" onClick={signOut}>Sign out</button>
      </header>
      {can('flag:read') ? <FlagList canWrite={can('flag:write')} /> : <p>This account may not read flags.</p>}
    </div>
  )
}

render(<App />, document.getElementById('app') as HTMLElement)
