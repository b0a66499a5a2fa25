/** The audit entry as the OpenAPI document describes it (docs/api.md#audit-log). */

const Actor = {
  type: 'object',
  required: ['type', 'id', 'name'],
  properties: {
    type: { type: 'string', enum: ['user', 'token', 'system'] },
    id: { type: 'string', example: 'usr_3q2bqMWe2G9Zr0yLw1bXcg' },
    name: {
      type: 'string',
      description: 'The username, the token name, or the system part (cli, drop-folder, bootstrap)',
      example: 'alice',
    },
  },
}

const Resource = {
  type: 'object',
  nullable: true,
  additionalProperties: true,
  description:
    'The whole resource before or after the change (flag, user without secrets, token without secret, session); null on create and delete',
}

/** One audit entry. */
export const AuditEntrySchema = {
  type: 'object',
  required: ['id', 'at', 'actor', 'source', 'requestId', 'action', 'target', 'before', 'after'],
  properties: {
    id: { type: 'integer', description: 'Increases with every entry, never reused; the id of the change events too' },
    at: { type: 'string', format: 'date-time' },
    actor: Actor,
    source: { type: 'string', enum: ['api', 'ui', 'cli', 'drop-folder', 'import-upload', 'import-url', 'rollback', 'bootstrap'] },
    requestId: { type: 'string', description: 'The request id, or one shared by the entries of one CLI command or dropped file' },
    action: { type: 'string', example: 'flag.updated', description: '<target type>.<created|updated|deleted>' },
    target: {
      type: 'object',
      required: ['type'],
      properties: {
        type: { type: 'string', enum: ['flag', 'user', 'token', 'session', 'segment', 'environment', 'change-request'] },
        id: { type: 'string' },
        name: { type: 'string' },
      },
    },
    revision: { type: 'integer', description: 'Flags: the revision after the change (before it, for a deletion)' },
    environment: {
      type: 'string',
      nullable: true,
      description:
        'Flags: the environment whose state the change moved, or null when it moved shared fields only (a create, a delete, a change of the definition); before and after show the flag as that environment sees it',
    },
    changeRequest: { type: 'string', description: 'Flags: the change request that made the change' },
    lateSeconds: { type: 'integer', description: 'Flags: a scheduled change applied this many seconds late (the daemon was down)' },
    guard: {
      type: 'object',
      required: ['check', 'kind', 'treatment', 'control', 'difference'],
      description: 'Flags: a rollout its guard stopped (source guard): the check that tripped and what it saw',
      properties: {
        check: { type: 'integer', minimum: 0, description: 'The index of the check in rollout.guard.checks' },
        kind: { type: 'string', enum: ['error-rate', 'mean', 'threshold'] },
        treatment: {
          type: 'object',
          additionalProperties: true,
          description: "The rollout's variant: {total, errors, rate}, {count, mean} or {increase}",
        },
        control: { type: 'object', nullable: true, additionalProperties: true, description: 'The other variants (null for threshold)' },
        difference: {
          type: 'object',
          nullable: true,
          required: ['estimate', 'lower', 'upper'],
          description: 'Treatment minus control, with its confidence interval (null for threshold)',
          properties: { estimate: { type: 'number' }, lower: { type: 'number' }, upper: { type: 'number' } },
        },
      },
    },
    bypass: {
      type: 'boolean',
      description: "Flags: true when a protected environment's state was changed directly by someone holding flag:bypass",
    },
    before: Resource,
    after: Resource,
  },
  example: {
    id: 42,
    at: '2026-11-22T10:15:00.123Z',
    actor: { type: 'user', id: 'usr_3q2bqMWe2G9Zr0yLw1bXcg', name: 'alice' },
    source: 'api',
    requestId: 'deploy-7781',
    action: 'flag.updated',
    target: { type: 'flag', name: 'checkout/new_flow' },
    revision: 5,
    before: { name: 'checkout/new_flow', type: 'BOOLEAN', value: false, revision: 4 },
    after: { name: 'checkout/new_flow', type: 'BOOLEAN', value: true, revision: 5 },
  },
}
