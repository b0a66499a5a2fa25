/**
 * The words and small shapes of a flag's lifecycle, archive and prerequisites as the web UI shows
 * and edits them (docs/ui.md#lifecycle-archive-and-prerequisites): tags typed as text, why a flag is
 * marked potentially stale, "Requires … to be on", and the prerequisites a form sends.
 */

import { DEFAULT_LIFETIMES, type FlagKind, type FlagListFilter, isFlagKind } from '../../domain/flag-lifecycle.ts'

/** The tags typed in one text field: separated by commas or spaces (a tag holds neither), each once, in order. */
export function tagsOf(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).filter((t) => t !== ''))]
}

/** Why a flag carries the "potentially stale" mark: it has lived longer than its kind is expected to. */
export function staleTitle(kind: string, created: string): string {
  const known: FlagKind = isFlagKind(kind) ? kind : 'release'
  const days = DEFAULT_LIFETIMES[known]
  const expected =
    days === null ? 'has a lifetime set in the configuration' : `is expected to live ${days} days unless configured otherwise`
  const article = known === 'experiment' || known === 'operational' ? 'an' : 'a'
  return `Older than its kind's lifetime: ${article} ${known} flag ${expected} (lifecycle.${camel(known)}Days); this one was created ${created}`
}

/** `kill-switch` → `killSwitch`, as the configuration spells the key. */
const camel = (kind: string) => kind.replace(/-(.)/g, (_, c: string) => c.toUpperCase())

/** ["on"] → "on"; ["a", "b", "c"] → "a, b or c". */
export function variantsInWords(variants: readonly string[]): string {
  if (variants.length <= 1) return variants[0] ?? 'nothing'
  return `${variants.slice(0, -1).join(', ')} or ${variants[variants.length - 1]}`
}

/** One prerequisite as the page holds it: the flag required (`''` while none is picked) and the variants ticked. */
export interface PrerequisiteRow {
  flag: string
  variants: string[]
}

/** The prerequisites of a flag resource (none when absent or malformed). */
export function prerequisitesOf(flag: Record<string, unknown>): PrerequisiteRow[] {
  const list = flag.prerequisites
  if (!Array.isArray(list)) return []
  return list.flatMap((p) =>
    p && typeof p === 'object' && typeof (p as PrerequisiteRow).flag === 'string' && Array.isArray((p as PrerequisiteRow).variants)
      ? [{ flag: (p as PrerequisiteRow).flag, variants: (p as PrerequisiteRow).variants.filter((v) => typeof v === 'string') }]
      : [],
  )
}

/** The `prerequisites` a form sends: rows without a flag picked are left out; none at all removes them (`[]`). */
export function prerequisitesBody(rows: readonly PrerequisiteRow[]): PrerequisiteRow[] {
  return rows.filter((r) => r.flag !== '').map((r) => ({ flag: r.flag, variants: [...r.variants] }))
}

/** `variants` with `variant` ticked (kept in the order of `all`) or cleared. */
export function withVariant(variants: readonly string[], variant: string, on: boolean, all: readonly string[]): string[] {
  const chosen = new Set(variants)
  if (on) chosen.add(variant)
  else chosen.delete(variant)
  return [...all.filter((v) => chosen.has(v)), ...[...chosen].filter((v) => !all.includes(v))]
}

/** The list's lifecycle filters as typed: a kind (`''` any), an owner (`''` any), tags as text (every one). */
export interface LifecycleFilterInput {
  kind: string
  owner: string
  tags: string
}

/** The filter of `GET /api/flags` (docs/api.md#lifecycle) the list applies for `input`, in the live or the archived view. */
export function listFilterOf(input: LifecycleFilterInput, archived: boolean): FlagListFilter {
  const filter: FlagListFilter = { archived }
  if (input.kind !== '') filter.kind = input.kind
  if (input.owner !== '') filter.owner = input.owner
  const tags = tagsOf(input.tags)
  if (tags.length > 0) filter.tags = tags
  return filter
}

/** A flag's kind, owner and tags as its page's form holds them: tags as one line of text. */
export interface LifecycleDraft {
  kind: string
  owner: string
  tags: string
}

/** The form's lifecycle fields from a flag resource. */
export function lifecycleDraftOf(flag: Record<string, unknown>): LifecycleDraft {
  return {
    kind: typeof flag.kind === 'string' ? flag.kind : 'release',
    owner: typeof flag.owner === 'string' ? flag.owner : '',
    tags: Array.isArray(flag.tags) ? flag.tags.join(' ') : '',
  }
}

/** The lifecycle fields a save sends: an empty owner removes it (`null`); tags as typed, each once. */
export function lifecycleBody(d: LifecycleDraft): { kind: string; owner: string | null; tags: string[] } {
  return { kind: d.kind, owner: d.owner.trim() === '' ? null : d.owner, tags: tagsOf(d.tags) }
}
