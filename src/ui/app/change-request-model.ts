/**
 * Change requests as the UI sorts them (docs/ui.md#change-requests): which tab a request belongs to,
 * whether it waits for the signed-in person's review, and whether their approval would complete it.
 */

import { grants } from '../../domain/permission.ts'

type Actor = { type: string; id: string; name: string }
/** An approval or a rejection, with its comment. */
export type Review = { by: Actor; at: string; comment?: string }
/** One change of a request: the fields it sets (or a deletion) and, in a single read, its diff against now. */
export type RequestChange = {
  flag: string
  set: Record<string, unknown>
  delete?: boolean
  archive?: boolean
  diff?: Record<string, { before: unknown; after: unknown }>
}
/** A request as the API shows it. */
export type Request = {
  id: string
  environment: string
  title: string
  description: string
  state: string
  author: Actor
  changes: RequestChange[]
  approvals: Review[]
  rejection?: Review
  scheduledAt: string | null
  createdAt: string
  updatedAt: string
  /** When it was applied (an applied request). */
  appliedAt?: string
  failureReason?: string
}

/** The tabs of the Change requests page, in order: their key (kept in the address as `?tab=`) and name. */
export const TABS = [
  { key: 'review', label: 'Needs my review' },
  { key: 'open', label: 'Open' },
  { key: 'scheduled', label: 'Scheduled' },
  { key: 'closed', label: 'Closed' },
] as const

/** A tab's key. */
export type TabKey = (typeof TABS)[number]['key']

/** Who is looking: their user id and permissions. */
export type Viewer = { id: string; permissions: readonly string[] }

/** The states still waiting for something: a review, an apply, or their time. */
const PENDING = new Set(['open', 'approved', 'scheduled'])

/** Whether `r` still waits for something (open, approved or scheduled). */
export const isPending = (r: Pick<Request, 'state'>): boolean => PENDING.has(r.state)

/** Whether `viewer` may approve `r` now: open, in an environment where they hold `flag:approve`, not theirs, not approved by them yet. */
export function needsReviewBy(r: Request, viewer: Viewer): boolean {
  return (
    r.state === 'open' &&
    r.author.id !== viewer.id &&
    !r.approvals.some((a) => a.by.id === viewer.id) &&
    grants(viewer.permissions, 'flag:approve', r.environment)
  )
}

/** Whether `r` belongs in tab `tab`: Open holds open and approved requests, Closed the applied, rejected, cancelled and failed. */
export function inTab(r: Request, tab: TabKey, viewer: Viewer): boolean {
  if (tab === 'review') return needsReviewBy(r, viewer)
  if (tab === 'open') return r.state === 'open' || r.state === 'approved'
  if (tab === 'scheduled') return r.state === 'scheduled'
  return !isPending(r)
}

/** How many of `requests` each tab holds. */
export function tabCounts(requests: readonly Request[], viewer: Viewer): Record<TabKey, number> {
  const counts = { review: 0, open: 0, scheduled: 0, closed: 0 }
  for (const r of requests) for (const t of TABS) if (inTab(r, t.key, viewer)) counts[t.key]++
  return counts
}

/** The tab an address names, or `null` when it names none (or one that does not exist). */
export function tabOf(search: string): TabKey | null {
  const asked = new URLSearchParams(search).get('tab')
  return TABS.find((t) => t.key === asked)?.key ?? null
}

/** The tab a page opens on when the address names none: what needs the person's review when there is some, else the open requests. */
export const firstTab = (counts: Record<TabKey, number>): TabKey => (counts.review > 0 ? 'review' : 'open')

/**
 * Whether `viewer`'s approval would complete `r` (its environment needing `required` approvals) and it
 * may be applied at once: offered as `Approve & apply`. A request with a time of its own is left to
 * its schedule.
 */
export function approvalCompletes(r: Request, viewer: Viewer, required: number): boolean {
  return needsReviewBy(r, viewer) && r.scheduledAt === null && r.approvals.length + 1 >= required
}
