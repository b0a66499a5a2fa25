/**
 * API tokens (docs/api.md#api-tokens, docs/ui.md): the list with what each may do and when it was last used; a new
 * token's secret is shown once, with a copy button; revoking asks first. The permissions offered are
 * the signed-in person's own, since a token never holds more.
 */

import { useEffect, useState } from 'preact/hooks'
import { covers } from '../../domain/permission.ts'
import { api, type Permission } from './api.ts'
import { ConfirmButton } from './confirm-button.tsx'
import { useEnvironments } from './environment-choice.ts'
import { Field } from './field.tsx'
import { localTime } from './local-time.ts'
import { done, NoticeLine, refused, useOutcome } from './notice.tsx'
import { PermissionPicker } from './permission-picker.tsx'

type Token = {
  id: string
  name: string
  permissions: string[]
  flagPrefixes: string[]
  createdAt: string
  createdBy: { name: string }
  expiresAt: string | null
  lastUsedAt: string | null
}

/** Copies `text`; the Clipboard API needs a secure context, so plain-HTTP hosts fall back to a selection copy. */
async function copy(text: string, field: HTMLInputElement | null): Promise<boolean> {
  try {
    await navigator.clipboard.writeText(text)
    return true
  } catch {
    field?.select()
    return document.execCommand('copy')
  }
}

export function TokensPage({ canWrite, mine }: { canWrite: boolean; mine: readonly Permission[] }) {
  const [tokens, setTokens] = useState<Token[] | null>(null)
  const [name, setName] = useState('')
  const [permissions, setPermissions] = useState<Permission[]>([])
  const [expires, setExpires] = useState('')
  const [prefixes, setPrefixes] = useState('')
  const { errors, setErrors, message, setMessage, refusedWith } = useOutcome()
  const [secret, setSecret] = useState<{ name: string; token: string } | null>(null)
  const [copied, setCopied] = useState(false)
  // a token can hold what its maker holds, granted permissions included, environment by environment
  const offered = (p: string) => covers(mine, p)
  const [environment, setEnvironment] = useState('')
  const environments = useEnvironments()

  async function load() {
    const { data, error } = await api.GET('/api/tokens')
    if (data) setTokens(data as Token[])
    else setMessage(refused(error))
  }
  useEffect(() => void load(), [])

  async function create(e: Event) {
    e.preventDefault()
    setErrors({})
    setMessage(null)
    const flagPrefixes = prefixes
      .split(',')
      .map((p) => p.trim())
      .filter(Boolean)
    const { data, error } = await api.POST('/api/tokens', {
      body: { name, permissions, ...(expires ? { expiresAt: expires } : {}), flagPrefixes, ...(environment ? { environment } : {}) },
    })
    if (!data) {
      refusedWith(error)
      return
    }
    setSecret({ name: data.name, token: data.token })
    setCopied(false)
    setName('')
    setPermissions([])
    setExpires('')
    setPrefixes('')
    void load()
  }
  async function revoke(t: Token) {
    const { error } = await api.DELETE('/api/tokens/{tokenId}', { params: { path: { tokenId: t.id } } })
    setMessage(error ? refused(error) : done(`revoked ${t.name}`))
    void load()
  }

  return (
    <section class="page">
      <h1>API tokens</h1>
      <p class="meta">
        For applications, CI jobs and scripts: send one as <code>Authorization: Bearer fdt_…</code> or <code>X-API-Key</code>.
      </p>
      <NoticeLine notice={message} />
      {secret && (
        <div class="secret" role="status">
          <p>
            The secret of <strong>{secret.name}</strong>. Copy it now: it is not shown again.
          </p>
          <div class="actions">
            <label class="sr-only" for="tok-secret">
              Secret
            </label>
            <input id="tok-secret" readOnly value={secret.token} onFocus={(e) => e.currentTarget.select()} />
            <button
              type="button"
              onClick={async () => setCopied(await copy(secret.token, document.getElementById('tok-secret') as HTMLInputElement))}
            >
              {copied ? 'Copied' : 'Copy'}
            </button>
            <button type="button" class="plain" onClick={() => setSecret(null)}>
              Done
            </button>
          </div>
        </div>
      )}
      {canWrite && (
        <form onSubmit={create} class="card">
          <h2>New token</h2>
          <Field id="tok-name" label="Token name" error={errors.name}>
            <input id="tok-name" value={name} onInput={(e) => setName(e.currentTarget.value)} placeholder="ci deploy" required />
          </Field>
          {environments.list.length > 1 && (
            <Field id="tok-environment" label="Evaluates environment" error={errors.environment}>
              <select id="tok-environment" value={environment} onChange={(e) => setEnvironment(e.currentTarget.value)}>
                <option value="">the default environment</option>
                {environments.list.map((e) => (
                  <option key={e.name} value={e.name}>
                    {e.name}
                  </option>
                ))}
              </select>
            </Field>
          )}
          <PermissionPicker
            id="tok-perm"
            legend="Permissions"
            value={permissions}
            onChange={setPermissions}
            offered={offered}
            error={errors.permissions}
          />
          <Field id="tok-expires" label="Expires on (optional; at 00:00 UTC)" error={errors.expiresAt}>
            <input id="tok-expires" type="date" value={expires} onInput={(e) => setExpires(e.currentTarget.value)} />
          </Field>
          <Field id="tok-prefixes" label="Only flags starting with (comma-separated; empty for all)" error={errors.flagPrefixes}>
            <input
              id="tok-prefixes"
              value={prefixes}
              onInput={(e) => setPrefixes(e.currentTarget.value)}
              placeholder="mobile/, checkout/"
            />
          </Field>
          <button type="submit">Create token</button>
        </form>
      )}
      {tokens === null ? (
        <p>Loading…</p>
      ) : tokens.length === 0 ? (
        <p>No tokens yet.</p>
      ) : (
        <ul class="rows">
          {tokens.map((t) => (
            <li key={t.id} data-token={t.name}>
              <strong>{t.name}</strong>
              <span class="meta">
                {t.permissions.join(', ') || 'no permissions'}
                {t.flagPrefixes.length > 0 && ` · only ${t.flagPrefixes.join(', ')}`}
              </span>
              <span class="meta">
                created {localTime(t.createdAt)} by {t.createdBy.name} · {t.expiresAt ? `expires ${localTime(t.expiresAt)}` : 'no expiry'} ·{' '}
                {t.lastUsedAt ? `last used ${localTime(t.lastUsedAt)}` : 'never used'}
              </span>
              {canWrite && <ConfirmButton label={`Revoke ${t.name}`} confirm={`Revoke ${t.name} now`} onConfirm={() => revoke(t)} />}
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
