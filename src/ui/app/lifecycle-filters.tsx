/**
 * The flag list's lifecycle filters (docs/ui.md#lifecycle-archive-and-prerequisites): kind, owner
 * and tags (every one typed), and the "potentially stale" mark a flag carries once it has outlived
 * its kind's lifetime.
 */

import { FLAG_KINDS } from '../../domain/flag-lifecycle.ts'
import type { LifecycleFilterInput } from './lifecycle-words.ts'
import { staleTitle } from './lifecycle-words.ts'
import { localTime } from './local-time.ts'

/** The selects and the text field that filter the list by kind, owner and tags; `owners` are the ones the flags have. */
export function LifecycleFilters({
  value,
  owners,
  onChange,
}: {
  value: LifecycleFilterInput
  owners: readonly string[]
  onChange: (next: LifecycleFilterInput) => void
}) {
  return (
    <>
      <div class="field">
        <label for="filter-kind">Kind</label>
        <select id="filter-kind" value={value.kind} onChange={(e) => onChange({ ...value, kind: e.currentTarget.value })}>
          <option value="">any kind</option>
          <KindOptions />
        </select>
      </div>
      <div class="field">
        <label for="filter-owner">Owner</label>
        <select id="filter-owner" value={value.owner} onChange={(e) => onChange({ ...value, owner: e.currentTarget.value })}>
          <option value="">anyone</option>
          {owners.map((o) => (
            <option key={o} value={o}>
              {o}
            </option>
          ))}
        </select>
      </div>
      <div class="field">
        <label for="filter-tags">Tags (all of)</label>
        <input
          id="filter-tags"
          value={value.tags}
          placeholder="web q4"
          onInput={(e) => onChange({ ...value, tags: e.currentTarget.value })}
        />
      </div>
    </>
  )
}

/** One `<option>` per kind of flag. */
export function KindOptions() {
  return (
    <>
      {FLAG_KINDS.map((k) => (
        <option key={k} value={k}>
          {k}
        </option>
      ))}
    </>
  )
}

/** The visible mark of a flag older than its kind's lifetime, its title saying why; nothing for the others. */
export function StaleMark({ flag }: { flag: { potentiallyStale?: boolean; kind?: string; createdAt?: string } }) {
  if (flag.potentiallyStale !== true) return null
  return (
    <span class="chip old" title={staleTitle(flag.kind ?? 'release', flag.createdAt ? localTime(flag.createdAt) : 'long ago')}>
      potentially stale
    </span>
  )
}
