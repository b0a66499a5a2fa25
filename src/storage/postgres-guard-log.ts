/**
 * The guard log shared by replicas (docs/guarded-rollouts.md#the-applications-metrics): every
 * replica adds its amounts to the same rows of `flagd_guard_amounts` with an atomic upsert, so
 * concurrent additions add up, and reads sum what every replica wrote.
 */

import type { SQL } from 'bun'
import type { GuardAmount, GuardBounds, GuardLog } from './shared-tables.ts'

/** The guard log in the PostgreSQL database. */
export function sharedGuardLog(sql: SQL): GuardLog {
  return {
    shared: true,
    async add(amounts, bounds) {
      if (amounts.length === 0 && bounds.length === 0) return
      await sql.begin(async (tx) => {
        for (const b of bounds)
          await tx`INSERT INTO flagd_guard_bounds (env, flag, metric, from_ms, bounds)
            VALUES (${b.env}, ${b.flag}, ${b.metric}, ${b.fromMs}, ${JSON.stringify(b.bounds)}::jsonb)
            ON CONFLICT (env, flag, metric) DO UPDATE SET from_ms = EXCLUDED.from_ms, bounds = EXCLUDED.bounds
            WHERE EXCLUDED.from_ms > flagd_guard_bounds.from_ms`
        if (amounts.length === 0) return
        // one text array per column, cast in SQL: a single statement whatever the number of amounts
        const column = (pick: (a: GuardAmount) => string) => tx.array(amounts.map(pick), 'TEXT')
        await tx`INSERT INTO flagd_guard_amounts (env, flag, metric, at, variant, slot, value)
          SELECT * FROM unnest(
            ${column((a) => a.env)}::text[],
            ${column((a) => a.flag)}::text[],
            ${column((a) => a.metric)}::text[],
            ${column((a) => String(a.atMs))}::bigint[],
            ${column((a) => a.variant)}::text[],
            ${column((a) => String(a.slot))}::smallint[],
            ${column((a) => String(a.value))}::float8[])
          ON CONFLICT (env, flag, metric, at, variant, slot) DO UPDATE SET value = flagd_guard_amounts.value + EXCLUDED.value`
      })
    },
    async read(env, flag, metric, sinceMs, slots, stepMs) {
      const step = stepMs ?? 0
      const rows =
        (await sql`SELECT variant, slot, CASE WHEN ${step}::bigint = 0 THEN 0 ELSE at - at % ${step}::bigint END AS at_ms, SUM(value) AS value
        FROM flagd_guard_amounts WHERE env = ${env} AND flag = ${flag} AND metric = ${metric} AND at >= ${sinceMs}
        GROUP BY variant, slot, at_ms ORDER BY at_ms`) as {
          variant: string
          slot: number
          at_ms: string | number
          value: string | number
        }[]
      const out = rows.map((r) => ({ variant: r.variant, slot: Number(r.slot), atMs: Number(r.at_ms), value: Number(r.value) }))
      return slots === 'all' ? out : out.filter((r) => slots.includes(r.slot))
    },
    async bounds(env, flag, metric): Promise<GuardBounds | undefined> {
      const [row] = await sql`SELECT from_ms, bounds FROM flagd_guard_bounds WHERE env = ${env} AND flag = ${flag} AND metric = ${metric}`
      if (row === undefined) return undefined
      const bounds = typeof row.bounds === 'string' ? JSON.parse(row.bounds) : row.bounds
      return { env, flag, metric, fromMs: Number(row.from_ms), bounds: bounds as number[] }
    },
    async prune(beforeMs) {
      await sql`DELETE FROM flagd_guard_amounts WHERE at < ${beforeMs}`
    },
    close() {},
  }
}
