/**
 * Whether a context is in a rollout's share, decided natively (docs/change-control.md#progressive-rollouts):
 * exactly what the rule of `rolloutRule` decides, without running it, for the hot path. Apart from
 * `rollout.ts` because it hashes with Bun's MurmurHash3, which the web UI (which reads rollouts
 * too) does not have.
 */

import { type Rollout, SHARE_SCALE, shareAt } from './rollout.ts'
import { bucketHash, scaleHash } from './targeting/fractional.ts'

/**
 * Whether a context with bucket key `key` (the flag key and its targetingKey) is in the share at
 * `second`; `key` undefined (no targetingKey): in only at a share of 100 %.
 */
export function inRollout(r: Rollout, key: string | undefined, second: number): boolean {
  const share = shareAt(r, second)
  if (share <= 0) return false
  if (share >= SHARE_SCALE) return true
  return key !== undefined && scaleHash(bucketHash(key), SHARE_SCALE) < share
}
