/**
 * The fan-out pacer: a change after a quiet spell is written out on the next turn of the event loop
 * (not after the quiet time), the changes of one turn go out once, changes that follow a fan-out
 * closely wait for the quiet time and then go out together, and a fan-out that takes several turns
 * is never overlapped by the next.
 */

import { afterEach, expect, test } from 'bun:test'
import { createFanOutPacer, type FanOutPacer, type PacerTimer } from '../../src/sync/fan-out-pacer.ts'

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
const pacers: FanOutPacer[] = []
afterEach(() => {
  for (const p of pacers.splice(0)) p.stop()
})

/** A timer the test moves by hand: nothing here depends on how fast the machine is. */
function manualTimer(): PacerTimer & { advance(ms: number): void } {
  let now = 0
  const due: { at: number; fn: () => void }[] = []
  return {
    now: () => now,
    after(ms, fn) {
      const entry = { at: now + ms, fn }
      due.push(entry)
      return () => {
        const at = due.indexOf(entry)
        if (at >= 0) due.splice(at, 1)
      }
    },
    advance(ms) {
      now += ms
      for (const entry of due.filter((e) => e.at <= now).sort((a, b) => a.at - b.at)) {
        due.splice(due.indexOf(entry), 1)
        entry.fn()
      }
    },
  }
}

function pacer(quietMs: number) {
  const runs: number[] = []
  const timer = manualTimer()
  const p = createFanOutPacer(
    (done) => {
      runs.push(runs.length)
      done()
    },
    quietMs,
    timer,
  )
  pacers.push(p)
  return { p, runs, timer }
}

test('after a quiet spell a change goes out on the next turn, however long the quiet time', async () => {
  const { p, runs } = pacer(60_000)
  p.notify()
  expect(runs).toHaveLength(0) // not inside the committing code
  await nextTurn()
  expect(runs).toHaveLength(1)
})

test('the changes of one turn go out as one fan-out', async () => {
  const { p, runs } = pacer(60_000)
  for (let i = 0; i < 20; i++) p.notify()
  await nextTurn()
  await nextTurn()
  expect(runs).toHaveLength(1)
})

test('changes within the quiet time after a fan-out wait for it, then go out together', async () => {
  const { p, runs, timer } = pacer(150)
  p.notify()
  await nextTurn()
  expect(runs).toHaveLength(1)
  for (let i = 0; i < 5; i++) {
    p.notify()
    timer.advance(5)
  }
  expect(runs).toHaveLength(1) // held back
  timer.advance(124)
  await nextTurn()
  expect(runs).toHaveLength(1) // 149 ms after the fan-out: still quiet
  timer.advance(1)
  expect(runs).toHaveLength(2) // the five together
  timer.advance(1000)
  await nextTurn()
  expect(runs).toHaveLength(2) // and nothing more comes of them
})

test('stop cancels the fan-out waiting', async () => {
  const { p, runs, timer } = pacer(100)
  p.notify()
  p.stop()
  await nextTurn()
  timer.advance(150)
  await nextTurn()
  expect(runs).toHaveLength(0)
})

test('changes during a fan-out that takes several turns wait for its end, then go out once', async () => {
  let finish: (() => void) | undefined
  let runs = 0
  const timer = manualTimer()
  const p = createFanOutPacer(
    (done) => {
      runs++
      finish = done
    },
    50,
    timer,
  )
  pacers.push(p)
  p.notify()
  await nextTurn()
  expect(runs).toBe(1)
  for (let i = 0; i < 3; i++) p.notify() // while it is still writing
  timer.advance(120)
  await nextTurn()
  expect(runs).toBe(1) // never two at once
  finish?.()
  timer.advance(50)
  expect(runs).toBe(2)
  finish?.()
  timer.advance(120)
  await nextTurn()
  expect(runs).toBe(2) // the three changes went out together
})
