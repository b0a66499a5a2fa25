/**
 * The fan-out pacer: a change after a quiet spell is written out on the next turn of the event loop
 * (not after the quiet time), the changes of one turn go out once, changes that follow a fan-out
 * closely wait for the quiet time and then go out together, and a fan-out that takes several turns
 * is never overlapped by the next.
 */

import { afterEach, expect, test } from 'bun:test'
import { createFanOutPacer, type FanOutPacer } from '../../src/sync/fan-out-pacer.ts'

const nextTurn = () => new Promise((resolve) => setImmediate(resolve))
const pacers: FanOutPacer[] = []
afterEach(() => {
  for (const p of pacers.splice(0)) p.stop()
})

function pacer(quietMs: number) {
  const runs: number[] = []
  const p = createFanOutPacer((done) => {
    runs.push(runs.length)
    done()
  }, quietMs)
  pacers.push(p)
  return { p, runs }
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
  const { p, runs } = pacer(150)
  p.notify()
  await nextTurn()
  expect(runs).toHaveLength(1)
  for (let i = 0; i < 5; i++) {
    p.notify()
    await Bun.sleep(5)
  }
  expect(runs).toHaveLength(1) // held back
  const deadline = Date.now() + 3000
  while (runs.length < 2 && Date.now() < deadline) await Bun.sleep(10)
  await Bun.sleep(200) // and nothing more comes of the five
  expect(runs).toHaveLength(2)
})

test('stop cancels the fan-out waiting', async () => {
  const { p, runs } = pacer(100)
  p.notify()
  p.stop()
  await Bun.sleep(150)
  expect(runs).toHaveLength(0)
})

test('changes during a fan-out that takes several turns wait for its end, then go out once', async () => {
  let finish: (() => void) | undefined
  let runs = 0
  const p = createFanOutPacer((done) => {
    runs++
    finish = done
  }, 50)
  pacers.push(p)
  p.notify()
  await nextTurn()
  expect(runs).toBe(1)
  for (let i = 0; i < 3; i++) p.notify() // while it is still writing
  await Bun.sleep(120)
  expect(runs).toBe(1) // never two at once
  finish?.()
  const deadline = Date.now() + 3000
  while (runs < 2 && Date.now() < deadline) await Bun.sleep(5)
  expect(runs).toBe(2)
  finish?.()
  await Bun.sleep(120)
  expect(runs).toBe(2) // the three changes went out together
})
