/**
 * Sessions (docs/api.md#authentication, docs/ui.md): who is signed in, since when, last seen. Ending one's own session is
 * always allowed (ending the current one signs out); ending someone else's needs `session:write`.
 */

import { useEffect, useState } from 'preact/hooks'
import { api } from './api.ts'
import { ConfirmButton } from './confirm-button.tsx'
import { localTime } from './local-time.ts'
import { done, type Notice, NoticeLine, refused } from './notice.tsx'

type Session = { id: string; userId: string; username: string; createdAt: string; expiresAt: string; lastUsedAt: string; current: boolean }

export function SessionsPage({ canEndAny, meId, onSignedOut }: { canEndAny: boolean; meId: string; onSignedOut: () => void }) {
  const [sessions, setSessions] = useState<Session[] | null>(null)
  const [message, setMessage] = useState<Notice>(null)
  async function load() {
    const { data, error } = await api.GET('/api/sessions')
    if (data) setSessions(data as Session[])
    else setMessage(refused(error))
  }
  useEffect(() => void load(), [])
  async function end(s: Session) {
    const { error } = await api.DELETE('/api/sessions/{sessionId}', { params: { path: { sessionId: s.id } } })
    if (error) return setMessage(refused(error))
    if (s.current) return onSignedOut()
    setMessage(done(`ended ${s.username}'s session`))
    void load()
  }
  return (
    <section class="page">
      <h1>Sessions</h1>
      <NoticeLine notice={message} />
      {sessions === null ? (
        <p>Loading…</p>
      ) : (
        <ul class="rows">
          {sessions.map((s) => (
            <li key={s.id} data-session={s.id}>
              <strong>
                {s.username}
                {s.current && ' (this browser)'}
              </strong>
              <span class="meta">
                signed in {localTime(s.createdAt)} · last seen {localTime(s.lastUsedAt)} · expires {localTime(s.expiresAt)}
              </span>
              {(canEndAny || s.userId === meId) && (
                <ConfirmButton
                  label={`End session ${s.id.slice(0, 8)}`}
                  confirm={s.current ? 'End it and sign out' : `End ${s.username}'s session`}
                  onConfirm={() => end(s)}
                />
              )}
            </li>
          ))}
        </ul>
      )}
    </section>
  )
}
