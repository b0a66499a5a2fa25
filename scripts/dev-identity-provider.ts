/**
 * `bun run sso:dev`: an OpenID provider on your machine to try single sign-on without Docker
 * (docs/single-sign-on.md#trying-it-locally). It is `oidc-provider` (OpenID Certified, a dev
 * dependency) set up as the test suite sets it up: its development sign-in pages take any password,
 * one client for flagd, and two people: `ada` (group mobile-team) and `bob` (groups admins and
 * mobile-team). It prints the `FLAGD_AUTH_OIDC` to start flagd with, and runs until Ctrl-C.
 *
 * Options: `--port` (9090), `--flagd` (flagd's address, http://127.0.0.1:8080).
 */

import { parseArgs } from 'node:util'
import { startProvider } from '../test/helpers/oidc-provider.ts'

const { values } = parseArgs({
  options: { port: { type: 'string', default: '9090' }, flagd: { type: 'string', default: 'http://127.0.0.1:8080' } },
})
const flagd = (values.flagd as string).replace(/\/$/, '')
const redirectUri = `${flagd}/api/auth/oidc/callback`
const provider = await startProvider(
  [redirectUri],
  [
    { sub: 'ada', preferred_username: 'ada', email: 'ada@example.test', groups: ['mobile-team'] },
    { sub: 'bob', preferred_username: 'bob', email: 'bob@example.test', groups: ['admins', 'mobile-team'] },
  ],
  Number(values.port),
)
const oidc = {
  issuer: provider.issuer,
  clientId: provider.clientId,
  clientSecret: provider.clientSecret,
  redirectUri,
  scopes: 'openid profile email groups',
  groupPermissions: {
    admins: ['flag:read', 'flag:write', 'user:read', 'audit:read'],
    'mobile-team': { permissions: ['flag:read', 'flag:write'], flagPrefixes: ['mobile/'] },
  },
  label: 'Sign in with the dev provider',
}
console.log(`identity provider on ${provider.issuer} (people: ada, bob; any password)

start flagd in another terminal with:

FLAGD_AUTH_OIDC='${JSON.stringify(oidc)}' bun run start

then open ${flagd}/ui/ (this very address: the sign-in cookie belongs to it) and press "${oidc.label}".`)
process.on('SIGINT', () => void provider.stop().then(() => process.exit(0)))
