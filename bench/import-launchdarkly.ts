/**
 * The LaunchDarkly import's bench row (docs/migrations.md#from-launchdarkly): 10,000 flags of
 * LaunchDarkly's flag data (the test fixture's flags, each copied under new keys with its
 * prerequisites, targets of 20 users, and the fixture's segments), imported whole by
 * `PUT /api/migrations?format=launchdarkly` (bench/imports.ts): read, translated, validated and
 * committed. Run alone: `bun bench/imports.ts launchdarkly`.
 */

import { join } from 'node:path'

/** LaunchDarkly flag data with `count` flags copied from the fixture's. */
export async function launchdarklyFlagData(count: number): Promise<Record<string, unknown>> {
  const fixture = JSON.parse(await Bun.file(join(import.meta.dir, '../test/fixtures/foreign/launchdarkly/flag-data.json')).text())
  const shapes = Object.values(fixture.flags as Record<string, Record<string, unknown>>)
  const flags: Record<string, unknown> = {}
  for (let i = 0; Object.keys(flags).length < count; i++) {
    const shape = shapes[i % shapes.length] as Record<string, unknown>
    const copy = i / shapes.length
    const key = `${shape.key as string}-${Math.floor(copy)}`
    const users = Array.from({ length: 20 }, (_, u) => `user-${i}-${u}`)
    flags[key] = {
      ...shape,
      key,
      targets: [{ variation: 0, values: users }],
      prerequisites: ((shape.prerequisites ?? []) as { key: string; variation: number }[]).map((p) => ({
        ...p,
        key: `${p.key}-${Math.floor(copy)}`,
      })),
    }
  }
  return { flags, segments: fixture.segments }
}
