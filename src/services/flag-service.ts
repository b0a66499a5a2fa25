/**
 * Flag use cases (contract §5): create, read, partial update with rename and type change, delete,
 * with `If-Match` checked and applied in the same synchronous step, so of N writers holding the same
 * revision exactly one wins. Rejected requests change nothing; a no-op update writes nothing.
 */

import { ConflictError, InvalidError, NotFoundError, PreconditionFailedError, ValidationFailedError, type FieldProblem } from '../domain/errors.ts'
import { validateDefinition } from '../domain/flag-definition.ts'
import { nameCollision, nameProblem } from '../domain/flag-name.ts'
import { mergeUpdate, READ_ONLY_FIELDS } from '../domain/flag-update.ts'
import { definitionOf, type Flag } from '../domain/flag.ts'
import type { Store } from '../storage/json-file-store.ts'
import { ownEntry, type State } from '../storage/state.ts'
import { createFlagReadModel, type FlagReadModel } from './flag-read-model.ts'

/** The flag use cases. */
export interface FlagService {
  readonly read: FlagReadModel
  get(name: string): Flag
  count(): number
  create(input: unknown): Promise<Flag>
  update(name: string, patch: unknown, ifMatch?: string | null): Promise<Flag>
  remove(name: string, ifMatch?: string | null): Promise<void>
}

function asObject(input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new InvalidError('request body must be a JSON object', 'body', 'must be a JSON object')
  return input as Record<string, unknown>
}

/** Parses `If-Match` (`"4"`, `W/"4"`, `4`, `*`, or a list) and throws 412 unless it names `revision`. */
export function checkIfMatch(header: string | null | undefined, flag: Flag): void {
  if (header === null || header === undefined) return
  const tags = header.split(',').map((t) => t.trim().replace(/^W\//, '').replace(/^"(.*)"$/, '$1'))
  if (tags.includes('*') || tags.includes(String(flag.revision))) return
  throw new PreconditionFailedError(`flag ${flag.name} is at revision ${flag.revision}, not ${header.trim()}; GET it again and retry`, {
    revision: flag.revision,
  })
}

function checkFreeName(state: State, name: string, ignore?: string): void {
  if (ownEntry(state.flags, name) && name !== ignore) throw new ConflictError(`flag ${name} already exists`, { field: 'name' })
  const other = nameCollision(name, Object.keys(state.flags), ignore)
  if (other !== undefined) {
    const why = other.startsWith(`${name}/`) ? `${name} is a group holding flag ${other}` : `flag ${other} exists, so ${other}/ cannot be a group`
    throw new ConflictError(`name ${name} is not free: ${why}`, { field: 'name', conflictsWith: other })
  }
}

/** Creates the flag service over a store. */
export function createFlagService(store: Store, now: () => Date = () => new Date()): FlagService {
  const read = createFlagReadModel(store)
  const find = (name: string) => {
    const flag = ownEntry(store.state.flags, name)
    if (!flag) throw new NotFoundError(`no flag named ${JSON.stringify(name)}`)
    return flag
  }
  const fail = (problems: FieldProblem[]) => {
    throw new ValidationFailedError(problems)
  }

  return {
    read,
    get: find,
    count: () => Object.keys(store.state.flags).length,

    create(input) {
      const body = asObject(input)
      const problems: FieldProblem[] = []
      const whyName = Object.hasOwn(body, 'name') ? nameProblem(body.name) : 'required'
      if (whyName) problems.push({ field: 'name', reason: whyName })
      const result = validateDefinition(body, { ignoreFields: ['name'] })
      if (!result.ok) problems.push(...result.problems)
      if (problems.length > 0 || !result.ok) return Promise.reject(new ValidationFailedError(problems))
      const name = body.name as string
      return store.mutate((state) => {
        checkFreeName(state, name)
        const at = now().toISOString()
        const flag: Flag = { name, ...result.definition, createdAt: at, updatedAt: at, revision: 1 }
        state.flags[name] = flag
        return flag
      })
    },

    update(name, input, ifMatch) {
      const patch = { ...asObject(input) }
      for (const key of READ_ONLY_FIELDS) delete patch[key]
      const current = find(name)
      checkIfMatch(ifMatch, current)
      const problems: FieldProblem[] = []
      const newName = Object.hasOwn(patch, 'name') ? patch.name : name
      const whyName = nameProblem(newName)
      if (whyName) problems.push({ field: 'name', reason: whyName })
      const result = validateDefinition(mergeUpdate(current, patch), { ignoreFields: ['name'] })
      if (!result.ok) problems.push(...result.problems)
      if (problems.length > 0 || !result.ok) return fail(problems)
      const unchanged = newName === name && JSON.stringify(result.definition) === JSON.stringify(definitionOf(current))
      if (unchanged) return Promise.resolve(current)
      return store.mutate((state) => {
        if (newName !== name) checkFreeName(state, newName as string, name)
        const next: Flag = { name: newName as string, ...result.definition, createdAt: current.createdAt, updatedAt: now().toISOString(), revision: current.revision + 1 }
        delete state.flags[name]
        state.flags[next.name] = next
        return next
      })
    },

    async remove(name, ifMatch) {
      checkIfMatch(ifMatch, find(name))
      await store.mutate((state) => {
        delete state.flags[name]
      })
    },
  }
}
