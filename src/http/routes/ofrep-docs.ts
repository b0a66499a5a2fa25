/** OpenAPI documentation of the OFREP routes and the two event streams (docs/openfeature.md#ofrep). */

import type { RouteDoc } from '../route-docs.ts'

const EvaluationRequest = {
  type: 'object',
  description: 'Unknown fields are ignored. No body, {}, or a missing or null context all mean an empty context.',
  properties: {
    context: {
      type: 'object',
      nullable: true,
      additionalProperties: true,
      description: 'The evaluation context. Only targetingKey changes an answer: it assigns A/B tests.',
      properties: { targetingKey: { type: 'string', description: 'A stable user id; A/B tests split on it', example: 'user-42' } },
    },
  },
  example: { context: { targetingKey: 'user-42' } },
}

const Value = { description: 'BOOLEAN: boolean, INTEGER: integer, STRING and ENUM: string, TAG: array of strings, AB-TEST: "A" or "B"' }

const Evaluation = {
  type: 'object',
  required: ['key', 'value', 'reason', 'variant', 'metadata'],
  properties: {
    key: { type: 'string', example: 'checkout/new_flow' },
    value: Value,
    reason: {
      type: 'string',
      enum: ['STATIC', 'DEFAULT', 'SPLIT'],
      description: 'STATIC: the value; DEFAULT: the default value; SPLIT: the A/B assignment',
    },
    variant: { type: 'string', description: '"value" or "default"; for A/B tests the variant itself', example: 'value' },
    metadata: {
      type: 'object',
      required: ['type', 'revision'],
      properties: {
        type: { type: 'string', enum: ['BOOLEAN', 'INTEGER', 'STRING', 'ENUM', 'TAG', 'AB-TEST'] },
        revision: { type: 'integer' },
      },
    },
  },
  example: { key: 'checkout/new_flow', value: true, reason: 'STATIC', variant: 'value', metadata: { type: 'BOOLEAN', revision: 4 } },
}

const OfrepError = (codes: string[], withKey: boolean) => ({
  type: 'object',
  required: [...(withKey ? ['key'] : []), 'errorCode', 'errorDetails'],
  properties: {
    ...(withKey ? { key: { type: 'string' } } : {}),
    errorCode: { type: 'string', enum: codes },
    errorDetails: { type: 'string' },
  },
  example: {
    ...(withKey ? { key: 'checkout/new_flow' } : {}),
    errorCode: codes[0],
    errorDetails: codes[0] === 'FLAG_NOT_FOUND' ? 'no flag named "checkout/new_flow"' : 'the body is not valid JSON',
  },
})

const EventStreams = {
  type: 'array',
  description: 'Where to listen for changes (OFREP ADR-0008): the SSE stream, with a ticket that stands for this credential',
  items: {
    type: 'object',
    required: ['type', 'endpoint'],
    properties: {
      type: { type: 'string', enum: ['sse'] },
      endpoint: {
        type: 'object',
        required: ['requestUri'],
        properties: { requestUri: { type: 'string', example: '/ofrep/v1/events?ticket=dTp1c3Jf…' } },
      },
      inactivityDelaySec: { type: 'integer', example: 120 },
    },
  },
}

const STREAM_TEXT = { type: 'string', description: 'Server-sent events (text/event-stream)' }

/** The documentation of each OFREP route and of the management stream. */
export const ofrepDocs: Record<'single' | 'bulk' | 'events' | 'changes', RouteDoc> = {
  single: {
    summary: 'Evaluate one flag (OFREP)',
    operationId: 'ofrepEvaluateFlag',
    tag: 'evaluation',
    access: 'flag:evaluate',
    description:
      "OpenFeature Remote Evaluation Protocol. `flag:read` grants `flag:evaluate` too. A flag outside the token's flagPrefixes is FLAG_NOT_FOUND. Evaluations never write.",
    wildcard: { name: 'key', description: 'The flag name; its "/" may be written literally or as %2F' },
    body: EvaluationRequest,
    bodyRequired: false,
    success: { status: 200, schema: Evaluation, description: 'The evaluation' },
    errors: [413],
    other: {
      400: {
        schema: OfrepError(['PARSE_ERROR', 'INVALID_CONTEXT'], true),
        description: 'The body is not JSON, or context is not an object (OFREP error body)',
      },
      404: { schema: OfrepError(['FLAG_NOT_FOUND'], true), description: 'No such flag for this caller (OFREP error body)' },
    },
  },
  bulk: {
    summary: 'Evaluate every flag (OFREP bulk)',
    operationId: 'ofrepEvaluateFlags',
    tag: 'evaluation',
    access: 'flag:evaluate',
    description:
      'Every flag the caller can see, sorted by key. Sends an ETag; If-None-Match with the current one is answered 304 without evaluating. The ETag changes whenever the answer for that context would.',
    headers: [{ name: 'If-None-Match', description: 'The ETag of an earlier answer: 304 while it is current' }],
    body: EvaluationRequest,
    bodyRequired: false,
    success: {
      status: 200,
      schema: {
        type: 'object',
        required: ['flags', 'eventStreams'],
        properties: { flags: { type: 'array', items: Evaluation }, eventStreams: EventStreams },
      },
      description: 'The evaluations and the change stream',
      headers: { ETag: 'Opaque; send it back in If-None-Match' },
    },
    errors: [413],
    other: {
      304: { description: 'Not modified: nothing changed for this caller and context' },
      400: {
        schema: OfrepError(['PARSE_ERROR', 'INVALID_CONTEXT'], false),
        description: 'The body is not JSON, or context is not an object (OFREP error body)',
      },
    },
  },
  events: {
    summary: 'Flag change stream (OFREP SSE)',
    operationId: 'ofrepEvents',
    tag: 'evaluation',
    access: 'flag:evaluate',
    description:
      'After each committed change to flags the caller can see: `id: <n>` and `data: {"type":"refetchEvaluation","etag","lastModified"}`. A `: ping` comment at least every 15 s. ' +
      "Accepts the usual credential headers, or `ticket` from the bulk answer (browsers' EventSource cannot send headers). Closed when the credential is revoked.",
    success: { status: 200, schema: STREAM_TEXT, description: 'The event stream', contentType: 'text/event-stream' },
    errors: [400],
  },
  changes: {
    summary: 'Management change stream (SSE)',
    operationId: 'streamChanges',
    tag: 'flags',
    access: 'flag:read',
    description:
      'One event per committed flag change: `id:` the change (audit entry) id, `event: flag.created|flag.updated|flag.deleted`, `data: {"name","revision","previousName"?,"actor","at"}`. ' +
      'Reconnect with Last-Event-ID to receive what was missed first. A `: ping` comment at least every 15 s.',
    headers: [{ name: 'Last-Event-ID', description: 'The id of the last event received: the changes after it are sent first' }],
    success: { status: 200, schema: STREAM_TEXT, description: 'The event stream', contentType: 'text/event-stream' },
    errors: [400],
  },
}
