/**
 * A real OpenID provider on 127.0.0.1 for sign-in tests: `oidc-provider` (OpenID Certified), with
 * its development sign-in pages, one client for flagd, and the people of `accounts` (their claims,
 * groups included). `signIn` walks its pages as a browser would (cookies, the login form, the
 * consent form) and answers where the provider sends the browser back.
 */

import { freePort } from './free-port.ts'

/** A person of the provider: the claims it gives about them. */
export interface Account {
  sub: string
  preferred_username?: string
  email?: string
  groups?: string[]
}

/** The running provider. */
export interface TestProvider {
  issuer: string
  clientId: string
  clientSecret: string
  /** Follows `authorizationUrl` through the provider's pages as `login`; answers the callback URL it redirects to. */
  signIn(authorizationUrl: string, login: string): Promise<URL>
  stop(): Promise<void>
}

/**
 * Starts a provider whose client may redirect to `redirectUris`, on `port` or, by default, on a port
 * the system says is free (its issuer URL names the port, so it is chosen before listening; another
 * process can take it in between, so a port found in use is given up for another, a few times).
 */
export async function startProvider(redirectUris: string[], accounts: Account[], port?: number): Promise<TestProvider> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await startProviderOn(redirectUris, accounts, port ?? freePort())
    } catch (err) {
      if (port !== undefined || attempt >= 5 || (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err
    }
  }
}

async function startProviderOn(redirectUris: string[], accounts: Account[], port: number): Promise<TestProvider> {
  const issuer = `http://127.0.0.1:${port}`
  const clientId = 'flagd'
  const clientSecret = 'flagd-test-client-secret'
  // the provider warns at construction about its development defaults (keys, storage, pages), which a test wants
  const warn = console.warn
  console.warn = () => {}
  // loaded here, quietly: it also warns on load that it was made for Node.js (it works on Bun)
  const { default: Provider } = await import('oidc-provider')
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: clientId,
        client_secret: clientSecret,
        redirect_uris: redirectUris,
        grant_types: ['authorization_code'],
        response_types: ['code'],
      },
    ],
    features: { devInteractions: { enabled: true } },
    pkce: { required: () => true },
    claims: { openid: ['sub'], profile: ['preferred_username'], email: ['email'], groups: ['groups'] },
    scopes: ['openid', 'profile', 'email', 'groups'],
    // claims in the ID token itself, as Keycloak and most providers put them
    conformIdTokenClaims: false,
    async findAccount(_ctx: unknown, id: string) {
      const account = accounts.find((a) => a.sub === id)
      if (!account) return undefined
      return { accountId: id, claims: async () => ({ ...account }) }
    },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AuthorizationCode: 60, AccessToken: 600, IdToken: 600 },
  } as never)
  console.warn = warn
  provider.proxy = false
  const server = provider.listen(port)
  await new Promise((resolve, reject) => {
    server.once('listening', resolve)
    server.once('error', reject)
  })

  async function signIn(authorizationUrl: string, login: string): Promise<URL> {
    const jar = new Map<string, string>()
    const keep = (res: Response) => {
      for (const c of res.headers.getSetCookie()) {
        const [pair] = c.split(';')
        const [name, ...value] = (pair as string).split('=')
        jar.set(name as string, value.join('='))
      }
    }
    const cookie = () => [...jar].map(([k, v]) => `${k}=${v}`).join('; ')
    let url = new URL(authorizationUrl)
    for (let hop = 0; hop < 12; hop++) {
      if (url.origin !== issuer) return url // back at the client
      const page = await fetch(url, { headers: { cookie: cookie() }, redirect: 'manual' })
      keep(page)
      if (page.status >= 300 && page.status < 400) {
        url = new URL(page.headers.get('location') as string, url)
        continue
      }
      const html = await page.text()
      // the development pages: a login form, then a consent form
      const action = /action="([^"]+)"/.exec(html)?.[1]
      if (!action) throw new Error(`the provider showed a page without a form: ${html.slice(0, 200)}`)
      // the form's hidden fields (its prompt), and the login and password when it asks for them
      const body = new URLSearchParams()
      for (const m of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)) body.set(m[1] as string, m[2] as string)
      if (html.includes('name="login"')) {
        body.set('login', login)
        body.set('password', 'any')
      }
      const posted = await fetch(new URL(action, url), {
        method: 'POST',
        headers: { cookie: cookie(), 'content-type': 'application/x-www-form-urlencoded' },
        body,
        redirect: 'manual',
      })
      keep(posted)
      url = new URL(posted.headers.get('location') as string, url)
    }
    throw new Error('the provider never sent the browser back')
  }

  return {
    issuer,
    clientId,
    clientSecret,
    signIn,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  }
}
