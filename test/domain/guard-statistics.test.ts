/**
 * The guard's statistics (decision record 0011), simulated with a fixed seed so that nothing depends
 * on chance or on this machine: on A/A rollouts (treatment no worse than control) looked at after
 * every report, the confidence sequence trips at most `alpha` of them while repeating a fixed-sample
 * test at each look trips far more; a treatment that doubles the error rate, or adds 20 % to a
 * latency, is caught; nothing is decided before `minSamples`.
 */

import { expect, test } from 'bun:test'
import {
  boundaryMultiplier,
  histogramMoments,
  type MeanArm,
  meanDifference,
  type RateArm,
  rateDifference,
  trips,
} from '../../src/domain/guard-statistics.ts'

/** A small seeded generator (mulberry32): the same draws on every run. */
function seeded(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

/** Errors among `n` requests failing with probability `p` (a binomial draw). */
function errorsOf(random: () => number, n: number, p: number): number {
  let errors = 0
  for (let i = 0; i < n; i++) if (random() < p) errors++
  return errors
}

/** The naive test: a one-sided z-test of the rates at level `alpha`, as if each look were the only one. */
function naiveTrips(t: RateArm, c: RateArm, alpha: number): boolean {
  const pooled = (t.errors + c.errors) / (t.total + c.total)
  const se = Math.sqrt(pooled * (1 - pooled) * (1 / t.total + 1 / c.total))
  const z = se === 0 ? 0 : (t.errors / t.total - c.errors / c.total) / se
  const critical = alpha === 0.05 ? 1.6449 : Number.NaN
  return z > critical
}

/** Rollouts of `looks` reports of `perLook` requests an arm, error rates `pt` and `pc`: the share of rollouts each method trips. */
function simulate(runs: number, looks: number, perLook: number, pt: number, pc: number, seed: number) {
  const random = seeded(seed)
  let sequential = 0
  let naive = 0
  for (let run = 0; run < runs; run++) {
    const t: RateArm = { errors: 0, total: 0 }
    const c: RateArm = { errors: 0, total: 0 }
    let sTripped = false
    let nTripped = false
    for (let look = 0; look < looks; look++) {
      t.errors += errorsOf(random, perLook, pt)
      t.total += perLook
      c.errors += errorsOf(random, perLook, pc)
      c.total += perLook
      sTripped ||= trips(rateDifference(t, c, 0.05, 200), 0)
      nTripped ||= t.total >= 200 && naiveTrips(t, c, 0.05)
    }
    if (sTripped) sequential++
    if (nTripped) naive++
  }
  return { sequential: sequential / runs, naive: naive / runs }
}

test('A/A: looked at after every report, the sequence trips at most alpha of the rollouts; the naive test far more', () => {
  const { sequential, naive } = simulate(400, 100, 100, 0.02, 0.02, 20261207)
  expect(sequential).toBeLessThanOrEqual(0.05)
  expect(naive).toBeGreaterThan(0.2) // repeated looks: the fixed-sample test's 5 % becomes a multiple of it
})

test('a treatment that doubles the error rate is caught within the rollout', () => {
  const { sequential } = simulate(100, 100, 100, 0.04, 0.02, 7)
  expect(sequential).toBeGreaterThan(0.9)
})

test('nothing is decided before each arm has minSamples', () => {
  expect(rateDifference({ errors: 199, total: 199 }, { errors: 0, total: 5000 }, 0.05, 200)).toBeUndefined()
  expect(trips(rateDifference({ errors: 100, total: 200 }, { errors: 0, total: 200 }, 0.05, 200), 0)).toBe(true)
})

test('maxIncrease: a difference inside the allowed margin does not trip', () => {
  const d = rateDifference({ errors: 300, total: 10_000 }, { errors: 100, total: 10_000 }, 0.05, 200)
  expect(d?.estimate).toBeCloseTo(0.02, 10)
  expect(trips(d, 0)).toBe(true)
  expect(trips(d, 0.05)).toBe(false)
})

test('the interval narrows as samples grow, and never below a fixed-sample one', () => {
  const widths = [400, 4_000, 40_000, 400_000].map((n) => boundaryMultiplier(n, 0.05, 200))
  for (let i = 1; i < widths.length; i++) expect((widths[i] as number) / Math.sqrt(i)).toBeGreaterThan(0)
  for (const w of widths) expect(w).toBeGreaterThan(1.6449) // wider than a one-look z, as honesty costs
  const sampled = [400, 4_000, 40_000, 400_000].map((n) => boundaryMultiplier(n, 0.05, 200) / Math.sqrt(n))
  for (let i = 1; i < sampled.length; i++) expect(sampled[i] as number).toBeLessThan(sampled[i - 1] as number)
})

/** A latency histogram of `n` draws around `mean` (exponential-ish), on OpenTelemetry's default bounds in ms. */
function histogram(random: () => number, n: number, mean: number): MeanArm {
  const bounds = [0, 5, 10, 25, 50, 75, 100, 250, 500, 750, 1000, 2500, 5000, 7500, 10000]
  const buckets = new Array(bounds.length + 1).fill(0) as number[]
  let sum = 0
  for (let i = 0; i < n; i++) {
    const x = -mean * Math.log(1 - random())
    sum += x
    const at = bounds.findIndex((b) => x <= b)
    buckets[at === -1 ? bounds.length : at] = (buckets[at === -1 ? bounds.length : at] as number) + 1
  }
  return { count: n, sum, bounds, buckets }
}

test('mean: the histogram moments come from its count, sum and buckets, the spread inside a bucket included', () => {
  // all four in the bucket 5-15: their mean at its middle, and the spread a width of 10 allows (100 / 12)
  const m = histogramMoments({ count: 4, sum: 40, bounds: [5, 15], buckets: [0, 4, 0] })
  expect(m.mean).toBe(10)
  expect(m.variance).toBeCloseTo(100 / 12, 10)
  // the open ends have no width: a value there counts at its bound
  expect(histogramMoments({ count: 2, sum: 4, bounds: [5], buckets: [2, 0] })).toEqual({ mean: 2, variance: 9 })
})

test('mean: observations in one wide bucket are not taken for identical ones', () => {
  // means 500 and 501 in the bucket 0-1000, 10,000 observations each: nothing shows the difference
  const arm = (mean: number): MeanArm => ({ count: 10_000, sum: mean * 10_000, bounds: [0, 1000], buckets: [0, 10_000, 0] })
  expect(trips(meanDifference(arm(501), arm(500), 0.05, 200), 0)).toBe(false)
})

test('mean: A/A latencies do not trip over many looks; 20 % slower ones do', () => {
  const random = seeded(42)
  let falseTrips = 0
  let caught = 0
  for (let run = 0; run < 40; run++) {
    let aa = false
    let slow = false
    const arms = { t: [] as MeanArm[], c: [] as MeanArm[], s: [] as MeanArm[] }
    const merged = (list: MeanArm[]): MeanArm => ({
      count: list.reduce((n, h) => n + h.count, 0),
      sum: list.reduce((n, h) => n + h.sum, 0),
      bounds: (list[0] as MeanArm).bounds,
      buckets: (list[0] as MeanArm).buckets.map((_, i) => list.reduce((n, h) => n + (h.buckets[i] as number), 0)),
    })
    for (let look = 0; look < 30; look++) {
      arms.t.push(histogram(random, 100, 100))
      arms.c.push(histogram(random, 100, 100))
      arms.s.push(histogram(random, 100, 120))
      aa ||= trips(meanDifference(merged(arms.t), merged(arms.c), 0.05, 200), 0)
      slow ||= trips(meanDifference(merged(arms.s), merged(arms.c), 0.05, 200), 0)
    }
    if (aa) falseTrips++
    if (slow) caught++
  }
  expect(falseTrips / 40).toBeLessThanOrEqual(0.05)
  expect(caught / 40).toBeGreaterThan(0.5)
})

test('mean: a histogram without buckets tells no spread, so it decides nothing rather than trip on any difference', () => {
  const arm = (sum: number) => ({ count: 10_000, sum, bounds: [], buckets: [] })
  // treatment 0.1 % slower on average, with no way to know whether that is noise
  const d = meanDifference(arm(1001), arm(1000), 0.05, 200)
  expect(d === undefined || !trips(d, 0)).toBe(true)
  // one bucket holding every observation says as little
  const one = (sum: number) => ({ count: 10_000, sum, bounds: [], buckets: [10_000] })
  const e = meanDifference(one(1001), one(1000), 0.05, 200)
  expect(e === undefined || !trips(e, 0)).toBe(true)
})
