/**
 * Who a change request acts for (docs/change-control.md#who-applies): the principal a scheduled
 * apply acts as (its author, with the rights the author holds now), why that author may no longer
 * apply it, and the person behind an actor (a token stands for whoever made it), by whom approvals
 * are counted and the author is recognised.
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
 * The person behind an actor (docs/change-control.md#approvals): a user is their own; an API token is
 * the person who created it, through tokens that created tokens; a token whose creator is gone, or a
 * system actor, stands for itself. Approvals are counted, and the author is recognised, by person, so
 * one person's session and tokens are one voice and never the author's second pair of eyes.
 */
export function personOf(snapshot: Snapshot, actor: Actor): string {
  let current: Actor = actor
  for (let hops = 0; current.type === 'token' && hops < 20; hops++) {
    const creator = snapshot.tokens.get(current.id)?.createdBy
    if (creator === undefined) break
    current = creator
  }
  return `${current.type}:${current.id}`
}

/** Whether `p` counts as the author of `r`: the same person (the author, their tokens, or the author's creator). */
export function actsForAuthor(snapshot: Snapshot, p: Principal, r: ChangeRequest): boolean {
  return personOf(snapshot, actorOf(p)) === personOf(snapshot, r.author)
}

/** Whether the person behind `p` has approved `r` already (with a session or any of their tokens). */
export function approvedBySamePerson(snapshot: Snapshot, p: Principal, r: ChangeRequest): boolean {
  const person = personOf(snapshot, actorOf(p))
  return r.approvals.some((a) => personOf(snapshot, a.by) === person)
}
