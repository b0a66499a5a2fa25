/**
 * The one line of outcome a page shows after an action: the service's message when it refused
 * (styled as an error, announced to screen readers), or a short confirmation.
 */

import { useState } from 'preact/hooks'
import { messageOf } from './api.ts'
import { fieldErrors } from './field-errors.ts'

export type Notice = { text: string; bad: boolean } | null

/** The service's refusal, in its own words. */
export const refused = (error: unknown): Notice => ({ text: messageOf(error), bad: true })

/** A confirmation. */
export const done = (text: string): Notice => ({ text, bad: false })

export function NoticeLine({ notice }: { notice: Notice }) {
  if (!notice) return null
  return (
    <p class={notice.bad ? 'error' : 'note'} role="status">
      {notice.text}
    </p>
  )
}

/**
 * A form's outcome: the service's reason for each field, and the page's notice line. `refusedWith`
 * shows a refusal both ways at once, as every form does.
 */
export function useOutcome() {
  const [errors, setErrors] = useState<Record<string, string>>({})
  const [message, setMessage] = useState<Notice>(null)
  const refusedWith = (error: unknown) => {
    setErrors(fieldErrors(error))
    setMessage(refused(error))
  }
  return { errors, setErrors, message, setMessage, refusedWith }
}
