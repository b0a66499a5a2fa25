/**
 * `flagd change-request create|list|show|approve|apply` (docs/change-control.md#from-a-shell): change requests
 * for scripted releases, whether the daemon runs or not. An approval from here counts as the system
 * actor `cli`, never as the request's author.
 */

import { defineCommand } from 'citty'
import type { ChangeRequestView } from '../services/change-request-deps.ts'
import { changeRequestCreateCommand } from './change-request-create.ts'
import { configArgs, withAdmin } from './common-args.ts'
import { textTable } from './text-table.ts'

const lines = (r: ChangeRequestView): string[] => [
  `${r.id}  ${r.state}  ${r.environment}  ${r.title}`,
  `  by ${r.author.name} at ${r.createdAt}${r.scheduledAt ? `, scheduled for ${r.scheduledAt}` : ''}`,
  ...r.changes.map((c) => {
    const diff = c.diff ?? Object.fromEntries(Object.entries(c.set).map(([k, v]) => [k, { before: undefined, after: v }]))
    const fields = Object.entries(diff).map(([k, v]) => `${k} ${JSON.stringify(v.before ?? null)} → ${JSON.stringify(v.after)}`)
    return `  ${c.flag}: ${fields.length > 0 ? fields.join(', ') : 'no difference from now'}`
  }),
  ...r.approvals.map((a) => `  approved by ${a.by.name} at ${a.at}${a.comment ? `: ${a.comment}` : ''}`),
  ...(r.rejection ? [`  rejected by ${r.rejection.by.name}: ${r.rejection.comment ?? ''}`] : []),
  ...(r.failureReason ? [`  failed: ${r.failureReason}`] : []),
]

const listCommand = defineCommand({
  meta: { name: 'list', description: 'List change requests, newest first (a table on a terminal, --json for scripts)' },
  args: {
    state: { type: 'string', description: 'Only this state: open, approved, scheduled, applied, rejected, cancelled, failed' },
    environment: { type: 'string', description: 'Only this environment' },
    flag: { type: 'string', description: 'Only requests changing this flag' },
    json: { type: 'boolean', description: 'Print JSON' },
    ...configArgs,
  },
  async run({ args }) {
    const filter = {
      ...(args.state === undefined ? {} : { state: String(args.state) }),
      ...(args.environment === undefined ? {} : { environment: String(args.environment) }),
      ...(args.flag === undefined ? {} : { flag: String(args.flag) }),
    }
    const requests = await withAdmin(args, (admin) => admin.listChangeRequests(filter))
    if (args.json) return console.log(JSON.stringify(requests, null, 2))
    console.log(
      textTable([
        ['ID', 'STATE', 'ENVIRONMENT', 'AUTHOR', 'APPROVALS', 'SCHEDULED', 'TITLE'],
        ...requests.map((r) => [r.id, r.state, r.environment, r.author.name, String(r.approvals.length), r.scheduledAt ?? '', r.title]),
      ]),
    )
  },
})

const showCommand = defineCommand({
  meta: { name: 'show', description: 'Show one change request with what it would change now' },
  args: { id: { type: 'positional', description: 'The request id (cr_…)', required: true }, json: { type: 'boolean' }, ...configArgs },
  async run({ args }) {
    const request = await withAdmin(args, (admin) => admin.showChangeRequest(String(args.id)))
    console.log(args.json ? JSON.stringify(request, null, 2) : lines(request).join('\n'))
  },
})

const approveCommand = defineCommand({
  meta: { name: 'approve', description: 'Approve a change request (as the system actor cli)' },
  args: {
    id: { type: 'positional', description: 'The request id (cr_…)', required: true },
    comment: { type: 'string', description: 'What the approval says' },
    ...configArgs,
  },
  async run({ args }) {
    const comment = args.comment === undefined ? null : String(args.comment)
    const request = await withAdmin(args, (admin) => admin.approveChangeRequest(String(args.id), comment))
    console.log(`approved ${request.id}: now ${request.state}`)
  },
})

const applyCommand = defineCommand({
  meta: { name: 'apply', description: 'Apply an approved (or scheduled) change request now, all of it or nothing' },
  args: { id: { type: 'positional', description: 'The request id (cr_…)', required: true }, ...configArgs },
  async run({ args }) {
    const request = await withAdmin(args, (admin) => admin.applyChangeRequest(String(args.id)))
    console.log(`applied ${request.id} in ${request.environment}: ${request.changes.map((c) => c.flag).join(', ')}`)
  },
})

export const changeRequestCommand = defineCommand({
  meta: { name: 'change-request', description: 'Change requests: create, list, show, approve and apply them (docs/change-control.md)' },
  subCommands: { create: changeRequestCreateCommand, list: listCommand, show: showCommand, approve: approveCommand, apply: applyCommand },
})
