/**
 * The web UI (docs/ui.md): sign in, then the pages the signed-in person's permissions allow; the
 * navigation offers only those. Sign-out ends the session and drops the token.
 */

import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { grants, grantsSomewhere } from '../../domain/permission.ts'
import { AccountPage } from './account-page.tsx'
import { api, type Me, type Permission, session } from './api.ts'
import { AuditPage } from './audit-page.tsx'
import { ChangeRequestPage } from './change-request-page.tsx'
import { ChangeRequestsPage } from './change-requests-page.tsx'
import { ComparePage } from './compare-page.tsx'
import { loadEnvironments, useEnvironments } from './environment-choice.ts'
import { EnvironmentSwitcher } from './environment-switcher.tsx'
import { EnvironmentsPage } from './environments-page.tsx'
import { EvaluatePage } from './evaluate-page.tsx'
import { FlagList } from './flag-list.tsx'
import { FlagPage } from './flag-page.tsx'
import { ShortcutsHelp } from './keyboard-shortcuts.tsx'
import { MigrationsPage } from './migrations-page.tsx'
import { NewFlag } from './new-flag.tsx'
import { ReviewHost } from './review-dialog.tsx'
import { link, usePath } from './router.ts'
import { SegmentsPage } from './segments-page.tsx'
import { SessionsPage } from './sessions-page.tsx'
import { SignIn } from './sign-in.tsx'
import { TokensPage } from './tokens-page.tsx'
import { UsersPage } from './users-page.tsx'
import './styles.css'

/**
 * The pages of the navigation, each offered only with the permission it needs: `can` asks in the
 * chosen environment, `anywhere` in at least one.
 */
const PAGES: {
  path: string
  label: string
  needs: (can: (p: Permission) => boolean, anywhere: (p: Permission) => boolean) => boolean
}[] = [
  { path: '', label: 'Flags', needs: (can) => can('flag:read') },
  { path: 'new', label: 'New flag', needs: (can) => can('flag:write') },
  { path: 'segments', label: 'Segments', needs: (can) => can('flag:read') },
  { path: 'compare', label: 'Compare', needs: (_, anywhere) => anywhere('flag:read') },
  { path: 'change-requests', label: 'Change requests', needs: (_, anywhere) => anywhere('flag:read') },
  { path: 'environments', label: 'Environments', needs: (_, anywhere) => anywhere('flag:read') },
  { path: 'evaluate', label: 'Evaluate', needs: (can) => can('flag:evaluate') },
  { path: 'migrations', label: 'Import & export', needs: (can) => can('migration:read') || can('migration:write') },
  { path: 'users', label: 'Users', needs: (can) => can('user:read') },
  { path: 'tokens', label: 'Tokens', needs: (can) => can('token:read') },
  { path: 'sessions', label: 'Sessions', needs: (can) => can('session:read') },
  { path: 'audit', label: 'Audit log', needs: (can) => can('audit:read') },
]

function App() {
  const [me, setMe] = useState<Me | null>(null)
  // back from the identity provider: the sign-in page takes the fragment's code, whoever was signed in before
  const [signedIn, setSignedIn] = useState(Boolean(session.token) && !location.hash.startsWith('#oidc-'))
  const path = usePath()
  const [notice, setNotice] = useState<string | null>(null)
  // the Flags page's search, kept above the page remade per environment: switching environments keeps what was typed (docs/ui.md#the-flags-table)
  const [flagSearch, setFlagSearch] = useState('')
  useEffect(
    () =>
      session.onExpired(() => {
        signedOut()
        setNotice('Your session has ended: sign in again.')
      }),
    [],
  )
  useEffect(() => {
    if (!signedIn) return
    void api.GET('/api/me').then(async ({ data }) => {
      if (!data) return signedOut()
      await loadEnvironments(data.permissions)
      setMe(data)
    })
  }, [signedIn])
  const environments = useEnvironments()
  function signedOut() {
    session.set(null)
    setFlagSearch('')
    setMe(null)
    setSignedIn(false)
  }
  async function signOut() {
    await api.POST('/api/logout')
    signedOut()
  }
  if (!signedIn)
    return (
      <SignIn
        notice={notice}
        onSignedIn={() => {
          setNotice(null)
          setSignedIn(true)
        }}
      />
    )
  if (!me) return <p>Loading…</p>
  // flag permissions are asked in the chosen environment (docs/environments.md#permissions)
  const env = environments.current
  const can = (p: Permission) => grants(me.permissions, p as Parameters<typeof grants>[1], env)
  const anywhere = (p: Permission) => grantsSomewhere(me.permissions, p as Parameters<typeof grants>[1])
  const who = 'username' in me ? me.username : me.name
  const offered = PAGES.filter((p) => p.needs(can, anywhere))
  // the start page is the first one this person may open (the flags, for most)
  // a request's own page (docs/ui.md#change-requests) belongs to the Change requests page
  const request = path.startsWith('change-requests/') ? path.slice('change-requests/'.length) : null
  const page = path.startsWith('flags/') ? 'flags/' : request !== null ? 'change-requests' : path === '' ? (offered[0]?.path ?? '') : path
  const allowed = page === 'account' || (page === 'flags/' ? can('flag:read') : offered.some((p) => p.path === page))
  return (
    <div class="app">
      <header>
        <a class="brand" {...link('')}>
          flagd
        </a>
        <nav aria-label="Pages">
          {offered.map((p) => (
            <a key={p.path} {...link(p.path)} aria-current={p.path === page ? 'page' : undefined}>
              {p.label}
            </a>
          ))}
        </nav>
        <EnvironmentSwitcher permissions={me.permissions} />
        <a class="who" href={link('account').href} onClick={link('account').onClick} aria-label={`Your account: ${who}`}>
          {who}
        </a>
        <button type="button" class="sign-out" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main key={env}>
        {!allowed ? (
          <section class="page">
            <p>
              {offered.length > 0
                ? 'This account may not open this page.'
                : 'This account has no permissions yet: ask an administrator for some.'}
            </p>
          </section>
        ) : page === 'account' ? (
          <AccountPage meId={me.id} username={who} permissions={me.permissions} />
        ) : page === 'new' ? (
          <NewFlag />
        ) : page === 'flags/' ? (
          // one page per flag: a link from one flag's page to another's (a prerequisite) starts afresh,
          // so edits not saved on the first, and its open editors, never carry over to the second
          <FlagPage
            key={path.slice('flags/'.length)}
            name={path.slice('flags/'.length)}
            canWrite={can('flag:write')}
            permissions={me.permissions}
          />
        ) : page === 'segments' ? (
          <SegmentsPage canWrite={can('flag:write')} />
        ) : page === 'evaluate' ? (
          <EvaluatePage canList={can('flag:read')} />
        ) : page === 'migrations' ? (
          <MigrationsPage canExport={can('migration:read')} canImport={can('migration:write')} />
        ) : page === 'users' ? (
          <UsersPage canWrite={can('user:write')} meId={me.id} />
        ) : page === 'tokens' ? (
          <TokensPage canWrite={can('token:write')} mine={me.permissions} />
        ) : page === 'sessions' ? (
          <SessionsPage canEndAny={can('session:write')} meId={me.id} onSignedOut={signedOut} />
        ) : page === 'audit' ? (
          <AuditPage />
        ) : request ? (
          <ChangeRequestPage id={request} viewer={{ id: me.id, permissions: me.permissions }} />
        ) : page === 'change-requests' ? (
          <ChangeRequestsPage me={me.id} permissions={me.permissions} />
        ) : page === 'compare' ? (
          <ComparePage permissions={me.permissions} />
        ) : page === 'environments' ? (
          <EnvironmentsPage canWrite={can('environment:write')} permissions={me.permissions} />
        ) : (
          <FlagList canWrite={can('flag:write')} permissions={me.permissions} me={me.id} query={flagSearch} onQuery={setFlagSearch} />
        )}
      </main>
      <ReviewHost permissions={me.permissions} />
      <ShortcutsHelp />
    </div>
  )
}

render(<App />, document.getElementById('app') as HTMLElement)
