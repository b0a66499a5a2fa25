/** /api/flags and /api/flags/{flagName} (docs/api.md#flags). The name may contain `/`, literal or as %2F. */

import { t } from 'elysia'
import { InvalidError } from '../../domain/errors.ts'
import type { Flag } from '../../domain/flag.ts'
import { READ_ONLY_FIELDS } from '../../domain/flag-update.ts'
import { requireJsonObject } from '../../domain/json-object.ts'
import type { Principal } from '../../domain/principal.ts'
import type { EvaluationService } from '../../services/evaluation-service.ts'
import type { FlagService } from '../../services/flag-service.ts'
import { jsonAnswer, notModifiedAnswer, taggedAnswer } from '../answers.ts'
import { MethodNotAllowedError } from '../error-handler.ts'
import { explainAnswer } from '../evaluation-explained.ts'
import { noneMatch, parseIfMatch } from '../if-match.ts'
import type { RequestContext } from '../request-context.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { ENVIRONMENT_PARAM, EnvironmentQuery } from '../schemas/common-schemas.ts'
import { ref } from '../schemas/flag-schemas.ts'

/** Dependencies of the flag routes. */
export interface FlagRouteDeps {
  flags: FlagService
  evaluations: EvaluationService
  bodyLimit: number
}

export const FLAG_NAME = {
  name: 'flagName',
  description: 'The flag name; its "/" may be written literally (app/checkout/new_flow) or as %2F',
}
const IF_NONE_MATCH = [{ name: 'If-None-Match', description: 'An ETag from an earlier answer: 304 without a body while it is current' }]
const NOT_MODIFIED = { 304: { description: 'Not modified: the ETag sent in If-None-Match is current' } }
const IF_MATCH = [{ name: 'If-Match', description: 'Apply only if the flag is at this revision ("4"); otherwise 412' }]

/** Decodes the wildcard part of the path (it arrives percent-encoded, as sent). */
export function flagNameFromPath(raw: string | undefined): string {
  if (raw === undefined) return ''
  if (!raw.includes('%')) return raw // nothing to decode (the common case, on the hot path)
  try {
    return decodeURIComponent(raw)
  } catch {
    throw new InvalidError('the flag name in the path is not valid percent-encoding', 'flagName', 'invalid percent-encoding')
  }
}

/**
 * The body of a flag PUT as the service takes it: a JSON object without the read-only fields a
 * client may send back from a GET (`createdAt`, `updatedAt`, `revision`), which are ignored.
 */
export function updateBody(body: unknown): Record<string, unknown> {
  const patch = { ...requireJsonObject(body) }
  for (const key of READ_ONLY_FIELDS) delete patch[key]
  return patch
}

/**
 * The answer to `GET /api/flags/{name}` (`rawName` as the path has it): the flag with its ETag, or
 * `304` while the client's copy is current.
 */
export function readFlagAnswer(
  flags: FlagService,
  principal: Principal,
  rawName: string | undefined,
  ifNoneMatch: string | null,
  requestId: string,
  env?: string,
): Response {
  const flag = flags.get(principal, flagNameFromPath(rawName), env)
  const { json, etag } = flags.read.text(flag)
  // a rollout's status and percent move with the time, the revision does not: never 304 (docs/guarded-rollouts.md#status-and-percent)
  const kept = noneMatch(ifNoneMatch, etag) && flag.rollout === undefined
  return kept ? notModifiedAnswer(requestId, etag) : taggedAnswer(requestId, json, etag)
}

/** Location of a flag: its name written literally. */
export const flagLocation = (name: string) => `/api/flags/${name.split('/').map(encodeURIComponent).join('/')}`

/** The flag routes. */
export function flagRoutes(deps: FlagRouteDeps): RouteSpec[] {
  const { flags } = deps
  const flagAnswer = (c: RequestContext, flag: Flag, status = 200, extra: Record<string, string> = {}) => {
    const { json, etag } = flags.read.text(flag)
    return jsonAnswer(c.id, json, status, { etag, ...extra })
  }

  return [
    route({
      method: 'GET',
      path: '/api/flags',
      compress: true,
      permission: 'flag:read',
      query: t.Object(
        {
          prefix: t.Optional(t.String({ description: 'Keep flags whose name starts with this (e.g. app/)' })),
          environment: ENVIRONMENT_PARAM,
          archived: t.Optional(t.BooleanString({ description: 'true: only archived flags (default: only the others)' })),
          kind: t.Optional(
            t.String({ description: 'Keep flags of this kind (release, experiment, operational, kill-switch, permission)' }),
          ),
          owner: t.Optional(t.String({ description: 'Keep flags of this owner' })),
          tag: t.Optional(t.String({ description: 'Keep flags with this tag; repeat it for flags with every one of them' })),
        },
        { additionalProperties: false },
      ),
      handle(c) {
        const { archived, kind, owner } = c.query
        const search = new URL(c.request.url).searchParams
        // a filter of one value named twice would silently take the last: refused instead (docs/api.md#lifecycle)
        for (const name of ['archived', 'kind', 'owner', 'prefix', 'environment'])
          if (search.getAll(name).length > 1)
            throw new InvalidError(`${name} takes one value; it was given ${search.getAll(name).length}`, name, 'given more than once')
        // several `tag` parameters: all of them (docs/api.md#lifecycle)
        const tags = c.query.tag === undefined ? [] : search.getAll('tag')
        const filter = { archived: archived === 'true', kind, owner, tags }
        const etag = flags.listTag(c.auth, c.query.environment, filter)
        if (noneMatch(c.request.headers.get('if-none-match'), etag)) return notModifiedAnswer(c.id, etag)
        return jsonAnswer(c.id, flags.list(c.auth, c.query.prefix ?? '', c.query.environment, filter), 200, { etag })
      },
      docs: {
        summary: 'List flags',
        operationId: 'listFlags',
        tag: 'flags',
        access: 'flag:read',
        description:
          'Sorted by name (code point order); archived flags only with archived=true. kind, owner and tag (repeatable: every one) filter the list. Sends an ETag; If-None-Match with the current one is answered 304.',
        headers: IF_NONE_MATCH,
        success: {
          status: 200,
          schema: { type: 'array', items: ref('Flag') },
          description: 'The flags',
          headers: { ETag: 'Changes with every flag change' },
        },
        errors: [400],
        other: NOT_MODIFIED,
      },
    }),
    route({
      method: 'POST',
      path: '/api/flags',
      permission: 'flag:write',
      query: EnvironmentQuery,
      body: { limit: deps.bodyLimit },
      async handle(c) {
        const flag = await flags.create(c.caller, c.body, c.query.environment)
        return flagAnswer(c, flag, 201, { location: flagLocation(flag.name) })
      },
      docs: {
        summary: 'Create a flag',
        operationId: 'createFlag',
        tag: 'flags',
        access: 'flag:write',
        description:
          'defaultValue defaults to the type\'s zero (false, 0, "", the first enumValue, [], "A"); a value makes valueExists true.',
        body: ref('NewFlag'),
        success: {
          status: 201,
          schema: ref('Flag'),
          description: 'The new flag',
          headers: { Location: 'URL of the flag', ETag: 'Its revision' },
        },
        errors: [400, 409, 413, 415, 503],
      },
    }),
    route({
      method: 'GET',
      path: '/api/flags/*',
      permission: 'flag:read',
      query: EnvironmentQuery,
      handle: (c) => readFlagAnswer(flags, c.auth, c.params['*'], c.request.headers.get('if-none-match'), c.id, c.query.environment),
      docs: {
        summary: 'Get a flag',
        operationId: 'getFlag',
        tag: 'flags',
        access: 'flag:read',
        wildcard: FLAG_NAME,
        headers: IF_NONE_MATCH,
        success: {
          status: 200,
          schema: ref('Flag'),
          description: 'The flag',
          headers: { ETag: 'The revision, for If-Match and If-None-Match' },
        },
        errors: [400, 404],
        other: NOT_MODIFIED,
      },
    }),
    route({
      method: 'PUT',
      path: '/api/flags/*',
      permission: 'flag:write',
      query: EnvironmentQuery,
      body: { limit: deps.bodyLimit },
      handle: async (c) =>
        flagAnswer(
          c,
          await flags.update(
            c.caller,
            flagNameFromPath(c.params['*']),
            updateBody(c.body),
            parseIfMatch(c.request.headers.get('if-match')),
            undefined,
            c.query.environment,
          ),
        ),
      docs: {
        summary: 'Change a flag (partial)',
        operationId: 'updateFlag',
        tag: 'flags',
        access: 'flag:write',
        description:
          'Validated as a whole; on any error nothing changes. A request that changes nothing answers 200 without a new revision.',
        wildcard: FLAG_NAME,
        headers: IF_MATCH,
        body: ref('FlagUpdate'),
        success: { status: 200, schema: ref('Flag'), description: 'The flag after the change', headers: { ETag: 'The new revision' } },
        errors: [400, 404, 409, 412, 413, 415, 503],
      },
    }),
    route({
      method: 'POST',
      path: '/api/flags/*',
      permission: 'flag:read',
      query: EnvironmentQuery,
      body: { limit: deps.bodyLimit },
      handle(c) {
        const raw = c.params['*'] ?? ''
        // only …/evaluate takes a POST under a flag's path
        if (!raw.endsWith('/evaluate')) throw new MethodNotAllowedError('POST', c.path, ['GET', 'PUT', 'DELETE'])
        const env = c.query.environment
        return explainAnswer(deps.evaluations, c.auth, flagNameFromPath(raw.slice(0, -'/evaluate'.length)), c.body, env)
      },
      docs: {
        summary: 'Evaluate a flag and say why',
        operationId: 'explainFlag',
        tag: 'flags',
        access: 'flag:read',
        description:
          'The OFREP answer for a context, plus `trace`: every condition tested (its place in the rule, in words, and its result), every segment entered, the percentage bucket, and why the value was served. The path is the flag name followed by /evaluate.',
        wildcard: { ...FLAG_NAME, suffix: '/evaluate' },
        body: ref('ExplainRequest'),
        success: { status: 200, schema: ref('ExplainedEvaluation'), description: 'The answer and why' },
        errors: [400, 404, 413, 415],
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/flags/*',
      permission: 'flag:write',
      // as on every flag route; the flag goes from every environment (docs/environments.md#flags-in-an-environment)
      query: EnvironmentQuery,
      async handle(c) {
        const name = flagNameFromPath(c.params['*'])
        const env = c.query.environment
        await flags.remove(c.caller, name, parseIfMatch(c.request.headers.get('if-match')), env)
        return { deleted: true, name }
      },
      docs: {
        summary: 'Delete a flag',
        operationId: 'deleteFlag',
        tag: 'flags',
        access: 'flag:write',
        description: 'The flag goes from every environment; ?environment= is taken as on every flag route (404 when unknown).',
        wildcard: FLAG_NAME,
        headers: IF_MATCH,
        success: { status: 200, schema: ref('FlagDeleted'), description: 'The flag was deleted' },
        errors: [400, 404, 412, 503],
      },
    }),
  ]
}
