/** The web UI (contract §17): sign in, then the flags; sign out ends the session. */

import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, session } from './api.ts'
import { FlagList } from './flag-list.tsx'
import { FlagPage } from './flag-page.tsx'
import { NewFlag } from './new-flag.tsx'
import { link, usePath } from './router.ts'
import { SignIn } from './sign-in.tsx'
import './styles.css'

type Me = { username?: string; name?: string; permissions: string[] }

function App() {
  const [me, setMe] = useState<Me | null>(null)
  const [signedIn, setSignedIn] = useState(Boolean(session.token))
  const path = usePath()
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
        <a class="brand" {...link('')}>flagd</a>
        <nav>
          {can('flag:write') && <a {...link('new')}>New flag</a>}
        </nav>
        <span class="who">{me.username ?? me.name}</span>
        <button type="button" onClick={signOut}>Sign out</button>
      </header>
      {!can('flag:read') ? (
        <p>This account may not read flags.</p>
      ) : path === 'new' && can('flag:write') ? (
        <NewFlag />
      ) : path.startsWith('flags/') ? (
        <FlagPage name={path.slice('flags/'.length)} canWrite={can('flag:write')} />
      ) : (
        <FlagList canWrite={can('flag:write')} />
      )}
    </div>
  )
}

render(<App />, document.getElementById('app') as HTMLElement)
