/** /api/segments and /api/segments/{segmentName} (docs/targeting.md#rules): reusable conditions for rules. */

import { t } from 'elysia'
import { SEGMENTS_REACH, toSegmentResource } from '../../domain/segment.ts'
import type { SegmentService, SegmentUse } from '../../services/segment-service.ts'
import { jsonAnswer } from '../answers.ts'
import { type RouteSpec, route } from '../route-spec.ts'
import { EnvironmentQuery, NoQuery } from '../schemas/common-schemas.ts'
import { ref } from '../schemas/flag-schemas.ts'

/** Dependencies of the segment routes. */
export interface SegmentRouteDeps {
  segments: SegmentService
  bodyLimit: number
}

const SegmentNameParams = t.Object({
  segmentName: t.String({ description: 'The segment name: 1-64 of A-Z a-z 0-9 . _ -', example: 'beta-testers' }),
})

/** A segment as the API shows it: `usedBy` names the flags, then the segments, whose rules refer to it. */
const resource = (segment: Parameters<typeof toSegmentResource>[0], usedBy: SegmentUse) => {
  const { name, description, rule, createdAt, updatedAt, revision } = toSegmentResource(segment)
  return { name, description, rule, usedBy: [...usedBy.flags, ...usedBy.segments], createdAt, updatedAt, revision }
}

/** The segment routes. */
export function segmentRoutes(deps: SegmentRouteDeps): RouteSpec[] {
  const { segments } = deps
  return [
    route({
      method: 'GET',
      path: '/api/segments',
      compress: true,
      permission: 'flag:read',
      query: EnvironmentQuery,
      handle: (c) => segments.list(c.auth, c.query.environment).map(({ segment, usedBy }) => resource(segment, usedBy)),
      docs: {
        summary: 'List segments',
        operationId: 'listSegments',
        tag: 'segments',
        access: 'flag:read',
        description:
          "In name order, each with the flags and segments whose rules refer to it (the flags' rules in the environment named by `?environment=`, else the default one's).",
        success: { status: 200, schema: { type: 'array', items: ref('Segment') }, description: 'The segments' },
        errors: [400],
      },
    }),
    route({
      method: 'GET',
      path: '/api/segments/:segmentName',
      permission: 'flag:read',
      query: EnvironmentQuery,
      handle(c) {
        const { segment, usedBy } = segments.get(c.auth, c.params.segmentName ?? '', c.query.environment)
        return resource(segment, usedBy)
      },
      docs: {
        summary: 'Get a segment',
        operationId: 'getSegment',
        tag: 'segments',
        access: 'flag:read',
        params: SegmentNameParams,
        success: { status: 200, schema: ref('Segment'), description: 'The segment' },
        errors: [400, 404],
      },
    }),
    route({
      method: 'PUT',
      path: '/api/segments/:segmentName',
      permission: 'flag:write',
      unscoped: SEGMENTS_REACH,
      query: NoQuery,
      body: { limit: deps.bodyLimit },
      async handle(c) {
        const name = c.params.segmentName ?? ''
        const { segment, usedBy, created } = await segments.put(c.caller, name, c.body)
        const body = JSON.stringify(resource(segment, usedBy))
        return jsonAnswer(c.id, body, created ? 201 : 200, created ? { location: `/api/segments/${encodeURIComponent(name)}` } : {})
      },
      docs: {
        summary: 'Create or replace a segment',
        operationId: 'putSegment',
        tag: 'segments',
        access: 'flag:write',
        description:
          "The rule is validated like a flag's targeting (operators, segments it refers to, no cycle). Changing the rule of a segment in use gives every flag that depends on it a new revision, so their ETags and OFREP events move. A token confined to flagPrefixes may not.",
        params: SegmentNameParams,
        body: ref('SegmentInput'),
        success: { status: 200, schema: ref('Segment'), description: 'The segment, replaced (201 when created, with Location)' },
        other: { 201: { schema: ref('Segment'), description: 'The segment, created' } },
        errors: [400, 403, 413, 415, 503],
      },
    }),
    route({
      method: 'DELETE',
      path: '/api/segments/:segmentName',
      permission: 'flag:write',
      unscoped: SEGMENTS_REACH,
      query: NoQuery,
      async handle(c) {
        const name = c.params.segmentName ?? ''
        await segments.remove(c.caller, name)
        return { deleted: true, name }
      },
      docs: {
        summary: 'Delete a segment',
        operationId: 'deleteSegment',
        tag: 'segments',
        access: 'flag:write',
        description: 'Refused with 409, naming them, while a flag or segment refers to it.',
        params: SegmentNameParams,
        success: { status: 200, schema: ref('SegmentDeleted'), description: 'Deleted' },
        errors: [400, 403, 404, 409, 503],
      },
    }),
  ]
}
