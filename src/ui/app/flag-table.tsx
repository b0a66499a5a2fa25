/**
 * The Flags page's table (docs/ui.md#the-flags-table): a row per flag with its name and description,
 * type, targeting in a few words, one cell per environment the person may read, its uses and its
 * last change; `/` groups as collapsible group rows, open until the person closes them.
 */

import { countOf } from './count-words.ts'
import { EnvironmentSwatch } from './environment-colour.tsx'
import type { FlagGroup } from './flag-tree.ts'
import { StaleMark } from './lifecycle-filters.tsx'
import { localTime } from './local-time.ts'
import { link } from './router.ts'
import { targetingSummary } from './rule-words.ts'
import { type ListedFlag, Switch, shownValue } from './value-switch.tsx'

/** A flag as the table shows it: with its lifecycle and, where one runs, its rollout's status and percent. */
export type TableFlag = ListedFlag & {
  kind?: string
  owner?: string
  tags?: string[]
  potentiallyStale?: boolean
  createdAt?: string
  rollout?: { status?: string; percent?: number } | null
}

/** A flag's usage, as `GET /api/usage` lists it. */
export type Use = { name: string; total: number; lastEvaluatedAt: string | null; lastServedInProcessAt: string | null; stale: boolean }

/** One environment's column: its flags, whether the person may write there, and the flags with a pending request. */
export interface EnvironmentColumn {
  environment: string
  chosen: boolean
  flags: ReadonlyMap<string, TableFlag>
  canWrite: boolean
  protected: boolean
  requiredApprovals: number
  /** Per flag with a pending request here, the id of the newest one (its `pending` mark links to it). */
  pending: ReadonlyMap<string, string>
}

/** How long a value's text may be in a cell before it is cut (the whole value is its title). */
const CUT = 24

/** A value as a cell shows it: an OBJECT as its number of keys, anything else as JSON cut to 24 characters. */
export function cellValue(f: ListedFlag): { text: string; whole: string } {
  const whole = shownValue(f)
  const v = f.valueExists ? f.value : f.defaultValue
  if (f.type === 'OBJECT' && v !== null && typeof v === 'object' && !Array.isArray(v))
    return { text: `{…} ${countOf(Object.keys(v).length, 'key')}`, whole }
  return { text: whole.length > CUT ? `${whole.slice(0, CUT - 1)}…` : whole, whole }
}

/** 1520 → "1.5k". */
const compact = (n: number) => (n < 1000 ? String(n) : n < 1_000_000 ? `${(n / 1000).toFixed(1)}k` : `${(n / 1_000_000).toFixed(1)}M`)

/** One environment's cell: the switch or the cut value, then `off`, the rollout's percentage and `pending`. */
function Cell({ column, name, onError, onWritten }: { column: EnvironmentColumn; name: string } & Pick<RowProps, 'onError' | 'onWritten'>) {
  const f = column.flags.get(name)
  const running = f?.rollout?.status === 'running' && typeof f.rollout.percent === 'number'
  const shown = f && f.type !== 'BOOLEAN' ? cellValue(f) : null
  const pendingId = column.pending.get(name)
  const request = pendingId === undefined ? undefined : link(`change-requests/${encodeURIComponent(pendingId)}`)
  return (
    <td class={column.chosen ? 'env-cell chosen' : 'env-cell'} data-environment={column.environment}>
      {f === undefined ? (
        <span class="meta">–</span>
      ) : shown ? (
        // focusable, so the whole value shows on focus as on hover
        <code class="value" title={shown.whole} tabIndex={shown.text === shown.whole ? undefined : 0}>
          {shown.text}
        </code>
      ) : (
        <Switch flag={f} canWrite={column.canWrite} onError={onError} onWritten={onWritten} environment={column.environment} />
      )}
      {f?.enabled === false && <span class="chip off">off</span>}
      {running && <span class="chip rolling">{Math.round(f?.rollout?.percent ?? 0)}%</span>}
      {request !== undefined && (
        <a
          class="chip pending"
          href={request.href}
          onClick={request.onClick}
          title="open its change request"
          // each mark says which request it opens, its visible word first (docs/ui.md#the-flags-table)
          aria-label={`pending: the change request for ${name} in ${column.environment}`}
        >
          pending
        </a>
      )}
    </td>
  )
}

/** One flag's row. */
function FlagRow(props: RowProps & { flag: TableFlag; shownName: string; hidden: boolean; depth: number }) {
  const { flag: f, shownName, columns, usage, onError, onWritten, hidden, depth } = props
  const use = usage.get(f.name)
  const summary = targetingSummary(f.targeting)
  return (
    // focusable by script only: `j`/`k` move between rows (docs/ui.md#flags-page-counters-and-shortcuts)
    <tr class="flag" data-flag={f.name} hidden={hidden} tabIndex={-1}>
      <th scope="row" class="what" style={depth ? { paddingLeft: `${0.5 + depth}rem` } : undefined}>
        <a class="name" {...link(`flags/${f.name}`)}>
          {shownName}
        </a>
        {f.enabled === false && <span class="chip off">disabled</span>}
        <StaleMark flag={f} />
        {use?.stale && (
          <span class="chip stale" title={use.lastEvaluatedAt ? `last evaluated ${localTime(use.lastEvaluatedAt)}` : 'never evaluated'}>
            stale
          </span>
        )}
        {f.description && <span class="desc">{f.description}</span>}
      </th>
      <td class="type opt">{f.type}</td>
      <td class="targeting opt">{summary ?? <span class="meta">–</span>}</td>
      {columns.map((c) => (
        <Cell key={c.environment} column={c} name={f.name} onError={onError} onWritten={onWritten} />
      ))}
      <td class="uses opt" title={use?.lastEvaluatedAt ? `last evaluated ${localTime(use.lastEvaluatedAt)}` : undefined}>
        {use ? compact(use.total) : '–'}
      </td>
      <td class="changed opt">{f.updatedAt ? <time dateTime={f.updatedAt}>{localTime(f.updatedAt)}</time> : '–'}</td>
    </tr>
  )
}

interface RowProps {
  columns: readonly EnvironmentColumn[]
  usage: ReadonlyMap<string, Use>
  onError: (m: string) => void
  /** Told what a switch's write did, in words (docs/ui.md#common-tasks). */
  onWritten: (words: string) => void
}

/** The rows of `group`: each subgroup's row (a disclosure button) above its rows, then its own flags. */
function groupRows(props: TableProps, group: FlagGroup<TableFlag>, depth: number, hidden: boolean): preact.JSX.Element[] {
  const span = 5 + props.columns.length
  const rows: preact.JSX.Element[] = []
  for (const g of group.groups) {
    const open = props.searching || !props.closed.has(g.path)
    rows.push(
      <tr key={`group:${g.path}`} class="group-row" data-group={g.path} hidden={hidden}>
        <th colSpan={span} scope="colgroup" style={depth ? { paddingLeft: `${0.5 + depth}rem` } : undefined}>
          <button type="button" class="group-toggle" aria-expanded={open} title={g.path} onClick={() => props.onToggle(g.path, !open)}>
            <span class="group-name">{g.name}</span> <span class="count">{countOf(g.total, 'flag')}</span>
          </button>
        </th>
      </tr>,
    )
    rows.push(...groupRows(props, g, depth + 1, hidden || !open))
  }
  for (const f of group.flags)
    rows.push(
      <FlagRow
        key={f.name}
        {...props}
        flag={f}
        shownName={f.name.slice(group.path ? group.path.length + 1 : 0)}
        hidden={hidden}
        depth={depth}
      />,
    )
  return rows
}

interface TableProps extends RowProps {
  /** The tree to show in groups, or a flat list (by last change). */
  tree: FlagGroup<TableFlag>
  flat: readonly TableFlag[] | null
  closed: ReadonlySet<string>
  searching: boolean
  onToggle: (path: string, open: boolean) => void
}

/** The table of flags: in groups, or flat when `flat` is given. */
export function FlagTable(props: TableProps) {
  return (
    <div class="flag-table-wrap">
      <table class="flag-table" aria-label={props.flat ? 'Flags by last change' : 'Flags by group'}>
        <thead>
          <tr>
            <th scope="col" class="col-name">
              Name
            </th>
            <th scope="col" class="opt col-type">
              Type
            </th>
            <th scope="col" class="opt col-targeting">
              Targeting
            </th>
            {props.columns.map((c) => (
              <th key={c.environment} scope="col" class={c.chosen ? 'env-head chosen' : 'env-head'}>
                <EnvironmentSwatch name={c.environment} />
                <span class="env-name">{c.environment}</span>{' '}
                {c.protected && (
                  <span class="chip protected" title={`changes need ${countOf(c.requiredApprovals, 'approval')}`}>
                    protected · {c.requiredApprovals}
                  </span>
                )}
              </th>
            ))}
            <th scope="col" class="opt col-uses">
              Uses (7 days)
            </th>
            <th scope="col" class="opt col-changed">
              Last changed
            </th>
          </tr>
        </thead>
        <tbody>
          {props.flat
            ? props.flat.map((f) => <FlagRow key={f.name} {...props} flag={f} shownName={f.name} hidden={false} depth={0} />)
            : groupRows(props, props.tree, 0, false)}
        </tbody>
      </table>
    </div>
  )
}
