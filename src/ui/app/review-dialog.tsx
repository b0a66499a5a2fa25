/**
 * The `Review changes` dialog (docs/ui.md#review-before-protected-changes): every write to a
 * protected environment (a save, a switch, a promotion, a rollout) is shown in words first, with a
 * title, a comment and an optional schedule, and goes out as a change request (`Request approval`);
 * someone holding `flag:bypass` there may tick `Apply now without review` to write at once. Callers
 * `await reviewChanges(...)`; the one `ReviewHost`, mounted once, shows it.
 */

import { useEffect, useRef, useState } from 'preact/hooks'
import { grants } from '../../domain/permission.ts'
import { messageOf } from './api.ts'
import { protectionInWords } from './change-words.ts'
import { environmentNamed } from './environment-choice.ts'
import { link } from './router.ts'

/** What the person chose: apply at once (a bypass), or request approval with these words. */
export type ReviewChoice = { apply: true } | { apply: false; title: string; description: string; scheduledAt?: string }

/** What carrying out the choice did: a request made, the write applied, or the service's refusal. */
export type ReviewOutcome = { requested: { id: string; state: string } } | { applied: true } | { error: unknown }

/** What the review came to: the outcome, or cancelled (nothing changed). */
export type ReviewResult = ReviewOutcome | { cancelled: true }

/** What to review: the environment, each flag's change in words, a title to start from, and how to carry the choice out. */
export interface ReviewAsk {
  environment: string
  changes: { flag: string; lines: string[] }[]
  title: string
  /** A schedule to start from (ISO). */
  scheduledAt?: string | undefined
  /** The environments whose `flag:bypass` applying at once needs (default: `environment`): every protected one a shared field reaches. */
  bypassIn?: readonly string[]
  /** A sentence saying which environments the change reaches beyond `environment`, and what is saved directly. */
  reach?: string
  run: (choice: ReviewChoice) => Promise<ReviewOutcome>
}

type Shown = { ask: ReviewAsk; done: (r: ReviewResult) => void }
let shownCount = 0
let show: ((s: Shown) => void) | null = null

/** Whether writes to `environment` are reviewed first: it is protected. */
export function needsReview(environment: string | undefined): boolean {
  return environmentNamed(environment)?.protected === true
}

/** Opens the dialog for `ask` and resolves once the choice is carried out or the review is cancelled. */
export function reviewChanges(ask: ReviewAsk): Promise<ReviewResult> {
  return new Promise((resolve) => (show ? show({ ask, done: resolve }) : resolve({ cancelled: true })))
}

/** Mounted once (main.tsx): shows each review asked for; `permissions` decide whether a bypass is offered. */
export function ReviewHost({ permissions }: { permissions: readonly string[] }) {
  const [shown, setShown] = useState<(Shown & { n: number }) | null>(null)
  const current = useRef<Shown | null>(null)
  useEffect(() => {
    show = (next) => {
      // a review asked for while another is open replaces it: the first one changed nothing
      current.current?.done({ cancelled: true })
      current.current = next
      setShown({ ...next, n: ++shownCount })
    }
    return () => {
      show = null
    }
  }, [])
  if (!shown) return null
  // closes this review only: a later one that replaced it stays
  const close = () => {
    if (current.current?.ask === shown.ask) current.current = null
    setShown((now) => (now?.ask === shown.ask ? null : now))
  }
  return (
    <ReviewDialog
      key={shown.n}
      ask={shown.ask}
      done={shown.done}
      bypass={(shown.ask.bypassIn ?? [shown.ask.environment]).every((env) => grants(permissions, 'flag:bypass', env))}
      onClose={close}
    />
  )
}

/** `YYYY-MM-DDTHH:mm` in the browser's zone, as a `datetime-local` input takes it. */
const localInput = (iso: string | undefined) => {
  if (!iso) return ''
  const at = new Date(iso)
  return new Date(at.getTime() - at.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}

const FOCUSABLE = 'a[href], button:not([disabled]), input:not([disabled]), textarea:not([disabled]), select:not([disabled])'

function ReviewDialog({ ask, done, bypass, onClose }: Shown & { bypass: boolean; onClose: () => void }) {
  const dialog = useRef<HTMLDialogElement>(null)
  const [title, setTitle] = useState(ask.title)
  const [comment, setComment] = useState('')
  const [schedule, setSchedule] = useState(localInput(ask.scheduledAt))
  const [applyNow, setApplyNow] = useState(false)
  const [busy, setBusy] = useState(false)
  const [problem, setProblem] = useState<string | null>(null)
  const [made, setMade] = useState<{ id: string; state: string } | null>(null)
  const settled = useRef(false)
  const env = environmentNamed(ask.environment)

  useEffect(() => {
    const opener = document.activeElement as HTMLElement | null
    const d = dialog.current
    if (d && !d.open) d.showModal()
    d?.querySelector<HTMLInputElement>('#review-title')?.focus()
    return () => {
      if (d?.open) d.close()
      opener?.focus()
    }
  }, [])
  useEffect(() => {
    if (made) dialog.current?.querySelector<HTMLElement>('.review-made a')?.focus()
  }, [made])

  const cancel = () => {
    if (!settled.current) done({ cancelled: true })
    settled.current = true
    onClose()
  }
  async function submit(e: Event) {
    e.preventDefault()
    if (busy) return
    const when = schedule && !applyNow ? new Date(schedule) : undefined
    if (when && Number.isNaN(when.getTime())) return setProblem('Schedule at: not a date and time; clear it to apply once approved')
    setBusy(true)
    setProblem(null)
    const at = when?.toISOString()
    const outcome = await ask.run(
      applyNow ? { apply: true } : { apply: false, title, description: comment, ...(at ? { scheduledAt: at } : {}) },
    )
    setBusy(false)
    if ('error' in outcome) return setProblem(messageOf(outcome.error))
    settled.current = true
    done(outcome)
    if ('requested' in outcome) setMade(outcome.requested)
    else onClose()
  }
  // Tab and Shift+Tab go round the dialog's own controls, never behind it
  const trap = (e: KeyboardEvent) => {
    if (e.key !== 'Tab' || !dialog.current) return
    const all = [...dialog.current.querySelectorAll<HTMLElement>(FOCUSABLE)]
    const [first, last] = [all[0], all[all.length - 1]]
    if (!first || !last) return
    if (e.shiftKey && document.activeElement === first) {
      e.preventDefault()
      last.focus()
    } else if (!e.shiftKey && document.activeElement === last) {
      e.preventDefault()
      first.focus()
    }
  }
  const approvals = env?.requiredApprovals ?? 0
  const go = made ? link(`change-requests/${made.id}`) : null
  return (
    <dialog
      ref={dialog}
      class="review-dialog"
      aria-modal="true"
      aria-labelledby="review-heading"
      onCancel={(e) => {
        e.preventDefault() // Escape: the dialog closes through `cancel`, which tells the caller
        cancel()
      }}
      // Chromium closes a modal dialog on Escape without a `cancel` event when nothing was clicked or typed in it
      onClose={cancel}
      onKeyDown={trap}
    >
      <h2 id="review-heading">Review changes</h2>
      <p class="meta">{protectionInWords(ask.environment, approvals)}</p>
      {ask.reach && <p class="review-reach">{ask.reach}</p>}
      <ul class="review-lines" aria-label="The changes">
        {ask.changes.map((c) => (
          <li key={c.flag}>
            <strong>{c.flag}</strong>
            <ul>
              {c.lines.map((line) => (
                <li key={line}>{line}</li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
      {made && go ? (
        <div class="review-made">
          <p role="status">
            Change request made ({made.state}):{' '}
            <a
              href={go.href}
              onClick={(e) => {
                onClose()
                go.onClick(e)
              }}
            >
              {title}
            </a>
          </p>
          <div class="actions">
            <button type="button" onClick={onClose}>
              Close
            </button>
          </div>
        </div>
      ) : (
        <form onSubmit={submit}>
          <div class="field">
            <label for="review-title">Title</label>
            <input id="review-title" required maxLength={200} value={title} onInput={(e) => setTitle(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="review-comment">Comment</label>
            <textarea id="review-comment" rows={3} maxLength={4096} value={comment} onInput={(e) => setComment(e.currentTarget.value)} />
          </div>
          <div class="field">
            <label for="review-schedule">Schedule at (optional)</label>
            <input
              id="review-schedule"
              type="datetime-local"
              value={schedule}
              disabled={applyNow}
              onInput={(e) => setSchedule(e.currentTarget.value)}
            />
          </div>
          {bypass && (
            <div class="field inline review-bypass">
              <input id="review-apply-now" type="checkbox" checked={applyNow} onChange={(e) => setApplyNow(e.currentTarget.checked)} />
              <label for="review-apply-now">Apply now without review</label>
            </div>
          )}
          {applyNow && (
            <p class="meta" id="review-apply-note">
              Request approval now applies the change at once, without a request (recorded as a bypass).
            </p>
          )}
          {problem && (
            <p class="error" role="alert">
              {problem}
            </p>
          )}
          <div class="actions">
            <button type="submit" disabled={busy} aria-describedby={applyNow ? 'review-apply-note' : undefined}>
              Request approval
            </button>
            <button type="button" class="plain" onClick={cancel}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </dialog>
  )
}
