/**
 * The schedule of change requests (docs/change-control.md#scheduled-changes): four times a second
 * (so a change lands within a second of its time) and once at start (so one whose time passed
 * while the daemon was down lands then, late, saying so), every approved request whose
 * `scheduledAt` has come is applied. Every replica runs it: applying re-reads the request in its
 * transaction, so one replica applies it and the others find it applied. A round never overlaps
 * the one before.
 */

import type { ChangeRequestService } from './change-request-service.ts'

const EVERY_MS = 250

/** What the schedule needs. */
export interface ScheduleDeps {
  changeRequests: ChangeRequestService
  log: { info(fields: object, msg: string): void; warn(fields: object, msg: string): void }
}

/** Starts the schedule; the answer stops it. */
export function startChangeSchedule(deps: ScheduleDeps): () => void {
  const { changeRequests, log } = deps
  let running = false
  const round = async () => {
    if (running) return
    running = true
    try {
      for (const done of await changeRequests.applyDue()) {
        const fields = { changeRequest: done.request.id, environment: done.request.environment, scheduledAt: done.request.scheduledAt }
        if (done.failureReason !== undefined)
          log.warn({ ...fields, reason: done.failureReason }, 'a scheduled change request could not be applied')
        else if (done.lateSeconds !== undefined)
          log.warn(
            { ...fields, lateSeconds: done.lateSeconds },
            'a scheduled change request was applied late (the daemon was not running at its time)',
          )
        else log.info(fields, 'a scheduled change request was applied')
      }
    } catch (err) {
      log.warn({ err }, 'applying scheduled change requests failed; trying again')
    } finally {
      running = false
    }
  }
  void round()
  const timer = setInterval(() => void round(), EVERY_MS)
  timer.unref()
  return () => clearInterval(timer)
}
