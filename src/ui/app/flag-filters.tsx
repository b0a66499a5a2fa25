/**
 * The Flags page's filters, one row above the table (docs/ui.md#the-flags-table): type, state, the
 * checkboxes (has rules, rolling out, pending review, needs your review, changed in 24 h) and the
 * lifecycle filters; search, sort and the archive's link on the heading's line. Everything but the
 * search lives in the address, so a filtered view can be shared.
 */

import type { ListNarrowing } from './empty-list-words.ts'
import { TypeOptions } from './flag-fields.tsx'
import { LifecycleFilters } from './lifecycle-filters.tsx'
import { link, replaceSearch } from './router.ts'

/** The filters a Flags page address names: those that narrow the list (empty-list-words.ts), and the sort. */
export interface ListFilters extends ListNarrowing {
  sort: 'name' | 'changed'
}

/** The filters of query string `search`. */
export function filtersOf(search: string): ListFilters {
  const params = new URLSearchParams(search)
  return {
    type: params.get('type') ?? '',
    state: params.get('state') ?? '',
    rules: params.get('rules') === 'true',
    rolling: params.get('rolling') === 'true',
    pending: params.get('pending') === 'true',
    review: params.get('review') === 'true',
    changed: params.get('changed') === '24h',
    sort: params.get('sort') === 'changed' ? 'changed' : 'name',
    life: { kind: params.get('kind') ?? '', owner: params.get('owner') ?? '', tags: params.get('tags') ?? '' },
  }
}

/** Whether any filter (not the sort) narrows the list. */
export const filtering = (f: ListFilters): boolean =>
  f.type !== '' ||
  f.state !== '' ||
  f.rules ||
  f.rolling ||
  f.pending ||
  f.review ||
  f.changed ||
  f.life.kind !== '' ||
  f.life.owner !== '' ||
  f.life.tags.trim() !== ''

/** Sets (or, with `''`, removes) the address's filter `key`. */
function setParams(values: Record<string, string>) {
  const next = new URLSearchParams(location.search)
  for (const [key, value] of Object.entries(values)) {
    if (value === '') next.delete(key)
    else next.set(key, value)
  }
  replaceSearch(next.toString())
}

/** A checkbox filter kept in the address as `key=value`. */
function Check({ id, label, on, param, value = 'true' }: { id: string; label: string; on: boolean; param: string; value?: string }) {
  return (
    <div class="field inline">
      <input id={id} type="checkbox" checked={on} onChange={(e) => setParams({ [param]: e.currentTarget.checked ? value : '' })} />
      <label for={id}>{label}</label>
    </div>
  )
}

/** Search, sort and the archive's link: the heading's line, beside the counters. */
export function ListTools({ sort, query, onQuery }: { sort: ListFilters['sort']; query: string; onQuery: (q: string) => void }) {
  return (
    <div class="list-tools">
      <div class="field">
        <label for="search">Search flags</label>
        <input id="search" type="search" value={query} onInput={(e) => onQuery(e.currentTarget.value)} placeholder="name contains…" />
      </div>
      <div class="field">
        <label for="sort">Sort by</label>
        <select id="sort" value={sort} onChange={(e) => setParams({ sort: e.currentTarget.value === 'changed' ? 'changed' : '' })}>
          <option value="name">name, in groups</option>
          <option value="changed">last change</option>
        </select>
      </div>
      <a class="archived-link" {...link('?archived=true')}>
        Archived flags
      </a>
    </div>
  )
}

/** The row of filters; `owners` are the owners the flags have. */
export function FlagFilters({ filters: f, owners }: { filters: ListFilters; owners: readonly string[] }) {
  return (
    <div class="list-filters">
      <div class="field">
        <label for="filter-type">Type</label>
        <select id="filter-type" value={f.type} onChange={(e) => setParams({ type: e.currentTarget.value })}>
          <option value="">any type</option>
          <TypeOptions />
        </select>
      </div>
      <div class="field">
        <label for="filter-state">State</label>
        <select id="filter-state" value={f.state} onChange={(e) => setParams({ state: e.currentTarget.value })}>
          <option value="">any state</option>
          <option value="enabled">enabled</option>
          <option value="disabled">disabled</option>
          <option value="stale">stale (unused)</option>
          <option value="old">potentially stale</option>
        </select>
      </div>
      <Check id="filter-rules" label="Has rules" on={f.rules} param="rules" />
      <Check id="filter-rolling" label="Rolling out" on={f.rolling} param="rolling" />
      <Check id="filter-pending" label="Pending review" on={f.pending} param="pending" />
      <Check id="filter-review" label="Needs your review" on={f.review} param="review" />
      <Check id="filter-changed" label="Changed in 24 h" on={f.changed} param="changed" value="24h" />
      <LifecycleFilters value={f.life} owners={owners} onChange={(life) => setParams({ ...life })} />
    </div>
  )
}
