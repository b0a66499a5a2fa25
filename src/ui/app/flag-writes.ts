/**
 * How a flag's page writes (docs/ui.md#change-control): directly with `PUT` (sent with `If-Match`),
 * or, in a protected environment for someone without `flag:bypass` there, as a change request:
 * the per-environment fields that differ from what the environment serves go into the request
 * (with the schedule time, when given), and shared fields, which need no review, are still saved
 * directly.
 */

import { REQUESTABLE_FIELDS } from '../../domain/change-request.ts'
import { grants } from '../../domain/permission.ts'
import { api } from './api.ts'
import { current, useEnvironments } from './environment-choice.ts'
import type { components } from './generated/api-types.ts'

const REQUESTABLE: ReadonlySet<string> = new Set(REQUESTABLE_FIELDS)

/** What a write did: saved (the flag's new revision), requested (the request), or refused (the error). */
export type WriteOutcome = { saved: number } | { requested: { id: string; state: string } } | { error: unknown }

/** Whether changes of the chosen environment's state go through change requests for `permissions`. */
export function useNeedsRequest(permissions: readonly string[]): boolean {
  const { list, current: env } = useEnvironments()
  const chosen = list.find((e) => e.name === env)
  return chosen?.protected === true && !grants(permissions, 'flag:bypass', chosen.name)
}

/** Writes `body` to flag `flag` (as the page last read it); `scheduledAt` (ISO) for a request. */
export async function writeFlag(
  flag: Record<string, unknown>,
  body: Record<string, unknown>,
  viaRequest: boolean,
  scheduledAt?: string,
): Promise<WriteOutcome> {
  const name = String(flag.name)
  const put = async (patch: Record<string, unknown>, revision: unknown): Promise<WriteOutcome> => {
    const { data, error } = await api.PUT('/api/flags/{flagName}', {
      params: { path: { flagName: name }, header: { 'If-Match': `"${revision}"` } },
      // the page builds the patch from the fields it shows; the server validates it whole
      body: patch as components['schemas']['FlagUpdate'],
    })
    return data ? { saved: (data as { revision: number }).revision } : { error }
  }
  if (!viaRequest) return put(body, flag.revision)
  const set: Record<string, unknown> = {}
  const shared: Record<string, unknown> = {}
  for (const [key, value] of Object.entries(body)) {
    if (!REQUESTABLE.has(key)) shared[key] = value
    else if (JSON.stringify(value ?? null) !== JSON.stringify(flag[key] ?? null)) set[key] = value
  }
  const sharedMoves = Object.entries(shared).some(([k, v]) => JSON.stringify(v ?? null) !== JSON.stringify(flag[k] ?? null))
  let revision = flag.revision
  if (sharedMoves) {
    const saved = await put(shared, revision)
    if (!('saved' in saved)) return saved
    revision = saved.saved
  }
  if (Object.keys(set).length === 0) return sharedMoves ? { saved: revision as number } : { saved: flag.revision as number }
  const { data, error } = await api.POST('/api/change-requests', {
    body: {
      environment: current() as string,
      title: `Change ${name}: ${Object.keys(set).join(', ')}`,
      changes: [{ flag: name, set }],
      ...(scheduledAt ? { scheduledAt } : {}),
    },
  })
  return data ? { requested: { id: (data as { id: string }).id, state: (data as { state: string }).state } } : { error }
}
