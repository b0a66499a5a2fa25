/**
 * Live updates from `GET /api/events` (docs/openfeature.md#ofrep). `EventSource` cannot send the Authorization
 * header, so the stream is read with `fetch`; it reconnects with `Last-Event-ID` after a drop, so no
 * change is missed.
 */

import { session } from './api.ts'

/** Calls `onChange` for every committed flag or segment change (`flag.*`, `segment.*`) until the returned function is called. */
export function listenForChanges(onChange: (type: string, data: { name: string; previousName?: string }) => void): () => void {
  const abort = new AbortController()
  let lastId = ''
  async function connect(): Promise<void> {
    while (!abort.signal.aborted) {
      try {
        const headers: Record<string, string> = { authorization: `Bearer ${session.token}` }
        if (lastId) headers['last-event-id'] = lastId
        const res = await fetch('/api/events?segments=true', { headers, signal: abort.signal })
        if (res.status === 401) return session.expire() // the session ended elsewhere
        if (!res.ok || !res.body) return // no permission: nothing to listen to
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
        let buffer = ''
        for (;;) {
          const { value, done } = await reader.read()
          if (done) break
          buffer += value
          let end = buffer.indexOf('\n\n')
          while (end !== -1) {
            const block = buffer.slice(0, end)
            buffer = buffer.slice(end + 2)
            const fields = Object.fromEntries(
              block
                .split('\n')
                .filter((l) => !l.startsWith(':'))
                .map((l) => [l.slice(0, l.indexOf(':')), l.slice(l.indexOf(':') + 1).trim()]),
            )
            if (fields.id) lastId = fields.id
            if (fields.event && fields.data) onChange(fields.event, JSON.parse(fields.data))
            end = buffer.indexOf('\n\n')
          }
        }
      } catch {
        // dropped: try again shortly
      }
      if (!abort.signal.aborted) await new Promise((r) => setTimeout(r, 1000))
    }
  }
  void connect()
  return () => abort.abort()
}
