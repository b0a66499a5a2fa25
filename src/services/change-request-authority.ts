/**
 * Who a change request acts for (docs/change-control.md#who-applies): the principal a scheduled
 * apply acts as (its author, with the rights the author holds now), why that author may no longer
 * apply it, and whether an approver counts as the author (the author, or a token the author made).
 */

import { isTokenExpired } from '../domain/api-token.ts'
import type { ChangeRequest } from '../domain/change-request.ts'
import { type Actor, actorOf, type Principal, type SystemName, systemPrincipal } from '../domain/principal.ts'
import { requireMayApply } from '../domain/write-guard.ts'
import type { Snapshot } from '../storage/store.ts'

/**
 * The principal a scheduled apply acts as: the request's author with the permissions it holds now
 * (docs/change-control.md#who-applies); one deleted, revoked or expired since holds none.
 */
export function principalOfActor(snapshot: Snapshot, actor: Actor, at: number): Principal {
  if (actor.type === 'user') {
    const user = snapshot.users.get(actor.id)
    const permissions = user?.permissions ?? []
    return { kind: 'user', userId: actor.id, username: actor.name, sessionId: '', permissions, flagPrefixes: user?.flagPrefixes ?? [] }
  }
  if (actor.type === 'token') {
    const token = snapshot.tokens.get(actor.id)
    const live = token !== undefined && !isTokenExpired(token, at)
    return {
      kind: 'token',
      tokenId: actor.id,
      name: actor.name,
      permissions: live ? token.permissions : [],
      flagPrefixes: token?.flagPrefixes ?? [],
    }
  }
  return systemPrincipal(actor.id as SystemName)
}

/** Why the author of a scheduled request may not apply it now, or `undefined` (docs/change-control.md#who-applies). */
export function authorProblem(snapshot: Snapshot, request: ChangeRequest, principal: Principal): string | undefined {
  const { author } = request
  if (author.type === 'user' && !snapshot.users.has(author.id)) return `its author ${author.name} no longer exists`
  if (author.type === 'token' && !snapshot.tokens.has(author.id)) return `its author, token ${author.name}, was revoked`
  try {
    requireMayApply(principal, request)
    return undefined
  } catch (err) {
    return `its author ${author.name} may no longer make it: ${(err as Error).message}`
  }
}

/**
 * Whether `p` counts as the author of `r` (docs/change-control.md#approvals): the author itself, or an
 * API token the author created (directly, or through tokens it created).
 */
export function actsForAuthor(snapshot: Snapshot, p: Principal, r: ChangeRequest): boolean {
  let actor: Actor | undefined = actorOf(p)
  for (let hops = 0; actor !== undefined && hops < 20; hops++) {
    if (actor.type === r.author.type && actor.id === r.author.id) return true
    actor = actor.type === 'token' ? snapshot.tokens.get(actor.id)?.createdBy : undefined
  }
  return false
}
