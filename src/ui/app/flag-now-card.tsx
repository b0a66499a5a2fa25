/**
 * What a flag does now in the chosen environment (docs/ui.md#a-flags-page): the `Enabled` switch with
 * its meaning, and the sentence that says what it serves, counting its rollout and its rules.
 */

import { link } from './router.ts'
import { type FlagNow, servesNow } from './serves-now.ts'

export function FlagNowCard({
  name,
  flag,
  canWrite,
  onEnabled,
}: {
  name: string
  flag: Record<string, unknown>
  canWrite: boolean
  onEnabled: (enabled: boolean) => void
}) {
  const enabled = flag.enabled !== false
  return (
    <div class="card now">
      <p class="serves">
        {servesNow(flag as unknown as FlagNow, Date.now())}{' '}
        <a {...link(`evaluate?flag=${encodeURIComponent(name)}`)}>Evaluate for a context</a>
      </p>
      <div class="enabled">
        <button
          type="button"
          role="switch"
          aria-checked={enabled}
          aria-label="Enabled"
          aria-describedby="enabled-meaning"
          class={enabled ? 'switch on' : 'switch'}
          disabled={!canWrite}
          onClick={() => onEnabled(!enabled)}
        />
        <span class="state">{enabled ? 'Enabled' : 'Disabled'}</span>
      </div>
      <p class="meta" id="enabled-meaning">
        {enabled
          ? 'Applications get its value and rules. Switch off to make every application use its own default: a kill switch that keeps the whole configuration.'
          : 'Every application gets its own default (OFREP reason DISABLED); value, variants and rules are kept. Switch on to serve them again.'}
      </p>
    </div>
  )
}
