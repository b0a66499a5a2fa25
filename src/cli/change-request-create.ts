/**
 * `flagd change-request create` (docs/change-control.md#from-a-shell): opens a change request from a
 * shell, where a protected environment's `409 CHANGE_REQUEST_REQUIRED` sends its user, whether the
 * daemon runs or not. Its author is the system actor `cli`: someone holding `flag:approve` there
 * approves it (not `flagd change-request approve`, which would be its author approving), and the
 * command line may then apply it.
 */

import { defineCommand } from 'citty'
import { configArgs, withAdmin } from './common-args.ts'
import { UsageError } from './usage-error.ts'

/** Every value of the repeated option `--name` (citty keeps only the last one). */
export function repeatedArg(rawArgs: readonly string[], name: string): string[] {
  const out: string[] = []
  for (let i = 0; i < rawArgs.length; i++) {
    const arg = rawArgs[i] as string
    if (arg === '--') break
    let value: string | undefined
    if (arg === `--${name}`) value = rawArgs[++i]
    else if (arg.startsWith(`--${name}=`)) value = arg.slice(name.length + 3)
    else continue
    if (value === undefined || value.startsWith('--')) throw new UsageError(`--${name} needs a value`)
    out.push(value)
  }
  return out
}

/** `field=value` as a field and its value: JSON when it parses (`true`, `5`, `{"…"}`), else the text itself. */
export function fieldAssignment(text: string): [string, unknown] {
  const at = text.indexOf('=')
  if (at <= 0) throw new UsageError(`--set takes field=value, e.g. --set value=true; got ${JSON.stringify(text)}`)
  const raw = text.slice(at + 1)
  try {
    return [text.slice(0, at), JSON.parse(raw)]
  } catch {
    return [text.slice(0, at), raw]
  }
}

/** The `changes` of the request from `--changes`, or from `--flag` with `--set`… or `--delete`. */
function changesOf(args: { changes?: string; flag?: string; delete?: boolean }, rawArgs: readonly string[]): unknown {
  const sets = repeatedArg(rawArgs, 'set')
  if (args.changes !== undefined) {
    if (args.flag !== undefined || sets.length > 0 || args.delete) throw new UsageError('--changes replaces --flag, --set and --delete')
    try {
      return JSON.parse(args.changes)
    } catch {
      throw new UsageError('--changes takes a JSON array of {flag, set} or {flag, delete: true}')
    }
  }
  if (args.flag === undefined)
    throw new UsageError('name the flag (--flag NAME with --set field=value or --delete), or give --changes JSON')
  if (args.delete) {
    if (sets.length > 0) throw new UsageError('--delete sets nothing: leave out --set')
    return [{ flag: args.flag, delete: true }]
  }
  if (sets.length === 0) throw new UsageError('say what to set: --set field=value (repeat for more fields), or --delete')
  return [{ flag: args.flag, set: Object.fromEntries(sets.map(fieldAssignment)) }]
}

export const changeRequestCreateCommand = defineCommand({
  meta: {
    name: 'create',
    description: 'Open a change request (as the system actor cli): one flag with --flag and --set/--delete, or several with --changes',
  },
  args: {
    environment: { type: 'string', description: 'The environment it changes', required: true },
    title: { type: 'string', description: 'What it does, in a line', required: true },
    description: { type: 'string', description: 'Why, at more length' },
    flag: { type: 'string', description: 'The flag it changes' },
    set: {
      type: 'string',
      description:
        'field=value to set (repeat): value, enabled, targeting, rollout…, or type, defaultValue, variants, metadata; JSON values',
    },
    delete: { type: 'boolean', description: 'Delete the flag instead (in every environment)' },
    changes: { type: 'string', description: 'Every change as JSON, as the API takes it: [{"flag": …, "set": {…}}, …]' },
    'scheduled-at': { type: 'string', description: 'Apply it at this time once approved (ISO 8601 with a zone)' },
    json: { type: 'boolean', description: 'Print the request as JSON' },
    ...configArgs,
  },
  async run({ args, rawArgs }) {
    const body = {
      environment: String(args.environment),
      title: String(args.title),
      ...(args.description === undefined ? {} : { description: String(args.description) }),
      changes: changesOf(
        {
          ...(args.changes === undefined ? {} : { changes: String(args.changes) }),
          ...(args.flag === undefined ? {} : { flag: String(args.flag) }),
          delete: args.delete === true,
        },
        rawArgs,
      ),
      ...(args['scheduled-at'] === undefined ? {} : { scheduledAt: String(args['scheduled-at']) }),
    }
    const request = await withAdmin(args, (admin) => admin.createChangeRequest(body))
    if (args.json) return console.log(JSON.stringify(request, null, 2))
    console.log(`opened ${request.id} in ${request.environment}: now ${request.state}`)
  },
})
