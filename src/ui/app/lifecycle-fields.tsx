/**
 * A flag's kind, owner and tags on its page (docs/ui.md#lifecycle-archive-and-prerequisites):
 * shown under its name, and edited in its settings form, saved with the definition like its
 * description; the service's reason for each shown at its field.
 */

import { Field } from './field.tsx'
import { KindOptions, StaleMark } from './lifecycle-filters.tsx'
import type { LifecycleDraft } from './lifecycle-words.ts'

/** The three inputs: Kind (a select), Owner, Tags (separated by spaces or commas). */
export function LifecycleFields({
  d,
  set,
  errors,
  disabled,
}: {
  d: LifecycleDraft
  set: (next: LifecycleDraft) => void
  errors: Record<string, string>
  disabled?: boolean
}) {
  const err = (field: string) => errors[field] ?? Object.entries(errors).find(([k]) => k.startsWith(`${field}.`))?.[1]
  return (
    <fieldset class="flag-fields lifecycle-fields" disabled={disabled}>
      <legend class="sr-only">Kind, owner and tags</legend>
      <Field id="f-kind" label="Kind" error={err('kind')}>
        <select id="f-kind" value={d.kind} onChange={(e) => set({ ...d, kind: e.currentTarget.value })}>
          <KindOptions />
        </select>
      </Field>
      <Field id="f-owner" label="Owner" error={err('owner')}>
        <input id="f-owner" value={d.owner} placeholder="a team, a person" onInput={(e) => set({ ...d, owner: e.currentTarget.value })} />
      </Field>
      <Field id="f-tags" label="Tags" error={err('tags')}>
        <input id="f-tags" value={d.tags} placeholder="web q4" onInput={(e) => set({ ...d, tags: e.currentTarget.value })} />
      </Field>
    </fieldset>
  )
}

/** The flag's kind, owner and tags in one line, with the "potentially stale" mark when it has one. */
export function LifecycleLine({ flag }: { flag: Record<string, unknown> }) {
  const kind = typeof flag.kind === 'string' ? flag.kind : 'release'
  const tags = Array.isArray(flag.tags) ? (flag.tags as string[]) : []
  return (
    <p class="meta lifecycle">
      <span>{kind} flag</span>
      {typeof flag.owner === 'string' && <span> · owned by {flag.owner}</span>}
      {tags.length > 0 && <span> · tags {tags.join(', ')}</span>}{' '}
      <StaleMark flag={flag as { potentiallyStale?: boolean; kind?: string; createdAt?: string }} />
    </p>
  )
}
