/**
 * The control socket's protocol: a version both ends send and check, and the argument list of each
 * `AdminApi` operation as a TypeBox tuple the daemon checks before calling the service. A CLI of
 * another release would otherwise send arguments of another shape and fail in some unrelated way
 * (or, worse, half-succeed); with the check it is refused with a sentence saying what to run.
 */

import { type Static, Type as T, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { AdminApi } from '../services/admin-service.ts'

/** Bumped whenever an operation, its arguments or its answer change shape. */
export const CONTROL_PROTOCOL = 9

/** The header both ends put their protocol version in, and the one naming their flagd release. */
export const PROTOCOL_HEADER = 'x-flagd-control-protocol'
export const VERSION_HEADER = 'x-flagd-version'

const Text = T.String()
const Permissions = T.Array(T.String())
const Optional = <S extends TSchema>(schema: S) => T.Optional(T.Union([schema, T.Undefined()]))

/** The arguments of every operation, in order. */
export const CONTROL_ARGUMENTS = {
  addUser: T.Tuple([T.Object({ username: Text, password: Text, permissions: Permissions, flagPrefixes: Optional(T.Array(Text)) })]),
  listUsers: T.Tuple([]),
  setPassword: T.Tuple([Text, Text]),
  deleteUser: T.Tuple([Text]),
  unlockUser: T.Tuple([Text]),
  addToken: T.Tuple([
    T.Object({
      name: Text,
      permissions: Permissions,
      expiresAt: Optional(Text),
      flagPrefixes: Optional(T.Array(Text)),
      environment: Optional(Text),
    }),
  ]),
  listTokens: T.Tuple([]),
  revokeToken: T.Tuple([Text]),
  listAudit: T.Tuple([
    T.Object({
      flag: Optional(Text),
      actor: Optional(Text),
      action: Optional(Text),
      since: Optional(Text),
      until: Optional(Text),
      limit: Optional(T.Union([Text, T.Number()])),
      before: Optional(T.Union([Text, T.Number()])),
    }),
  ]),
  listUsage: T.Tuple([]),
  // the environment, or null for the default one (JSON has no undefined)
  exportDocument: T.Tuple([T.Union([Text, T.Null()])]),
  exportFlagd: T.Tuple([T.Union([Text, T.Null()])]),
  // the document is checked by the migration service, as it is for an upload
  importDocument: T.Tuple([
    T.Unknown(),
    T.Object({
      mode: T.Union([T.Literal('merge'), T.Literal('replace')]),
      values: T.Union([T.Literal('overwrite'), T.Literal('keep')]),
      dryRun: T.Boolean(),
      environment: Optional(Text),
    }),
  ]),
  backupState: T.Tuple([]),
  listEnvironments: T.Tuple([]),
  putEnvironment: T.Tuple([Text, T.Object({ description: Optional(Text), copyFrom: Optional(Text) })]),
  removeEnvironment: T.Tuple([Text]),
  promote: T.Tuple([Text, T.Object({ from: Text, flags: Optional(T.Array(Text)), prefix: Optional(Text), dryRun: Optional(T.Boolean()) })]),
  listChangeRequests: T.Tuple([T.Object({ state: Optional(Text), environment: Optional(Text), flag: Optional(Text) })]),
  showChangeRequest: T.Tuple([Text]),
  // the body is checked by the change-request service, as it is for POST /api/change-requests
  createChangeRequest: T.Tuple([T.Unknown()]),
  approveChangeRequest: T.Tuple([Text, T.Union([Text, T.Null()])]),
  applyChangeRequest: T.Tuple([Text]),
  archiveFlag: T.Tuple([Text]),
  restoreFlag: T.Tuple([Text]),
} satisfies Record<keyof AdminApi, TSchema>

/** An operation's name. */
export type ControlMethod = keyof typeof CONTROL_ARGUMENTS

// compile-time: each tuple is what the operation takes
type Matches<M extends ControlMethod> = Static<(typeof CONTROL_ARGUMENTS)[M]> extends Parameters<AdminApi[M]> ? true : M
const everyTupleMatches: { [M in ControlMethod]: Matches<M> } = {
  addUser: true,
  listUsers: true,
  setPassword: true,
  deleteUser: true,
  unlockUser: true,
  addToken: true,
  listTokens: true,
  revokeToken: true,
  listAudit: true,
  listUsage: true,
  exportDocument: true,
  exportFlagd: true,
  importDocument: true,
  backupState: true,
  listEnvironments: true,
  putEnvironment: true,
  removeEnvironment: true,
  promote: true,
  listChangeRequests: true,
  showChangeRequest: true,
  createChangeRequest: true,
  approveChangeRequest: true,
  applyChangeRequest: true,
  archiveFlag: true,
  restoreFlag: true,
}
void everyTupleMatches

// compiled on first use: every CLI command loads this module, and only the daemon checks arguments
const checkers = new Map<ControlMethod, ReturnType<typeof TypeCompiler.Compile>>()

/** Every operation's name. */
export const CONTROL_METHODS = Object.keys(CONTROL_ARGUMENTS) as ControlMethod[]

/** Whether `name` is an operation of this protocol. */
export function isControlMethod(name: string): name is ControlMethod {
  return Object.hasOwn(CONTROL_ARGUMENTS, name)
}

/** Why `args` are not what `method` takes, or `undefined` when they are. */
export function argumentProblem(method: ControlMethod, args: unknown): string | undefined {
  let checker = checkers.get(method)
  if (checker === undefined) checkers.set(method, (checker = TypeCompiler.Compile(CONTROL_ARGUMENTS[method])))
  if (checker.Check(args)) return undefined
  const first = [...checker.Errors(args)][0]
  return first ? `argument ${first.path || '(all)'}: ${first.message}` : 'arguments of the wrong shape'
}

/** The sentence for two ends of different protocol versions. */
export function mismatchMessage(
  cli: { protocol: string | null; version: string | null },
  daemon: { protocol: string | null; version: string | null },
): string {
  const side = (v: { protocol: string | null; version: string | null }) =>
    v.protocol === null ? 'a release without a versioned control protocol' : `release ${v.version ?? '?'}, control protocol ${v.protocol}`
  return (
    `this flagd command (${side(cli)}) does not match the running daemon (${side(daemon)}); ` +
    'run the flagd binary the daemon was started from, or restart the daemon on this release'
  )
}
