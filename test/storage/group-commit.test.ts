/** The two-phase group-commit pipeline on its own: order, overlap, failures, and kicks never lost. */

import { expect, test } from 'bun:test'
import { type BatchSteps, deferred, GroupCommit, type PipelineBatch } from '../../src/storage/group-commit.ts'

interface B extends PipelineBatch {
  n: number
}

/** A pipeline over batches 1..n whose phases wait for the test to release them. */
function harness(count: number) {
  const queue: B[] = Array.from({ length: count }, (_, i) => ({ n: i + 1, done: deferred<void>() }))
  const log: string[] = []
  const gates = new Map<string, ReturnType<typeof deferred<void>>>()
  const gate = (name: string) => {
    let g = gates.get(name)
    if (!g) gates.set(name, (g = deferred<void>()))
    return g
  }
  const failures: { batches: number[]; cause: unknown }[] = []
  const undone: number[][] = []
  const steps: BatchSteps<B, number> = {
    take: () => queue.shift(),
    async prepare(b) {
      log.push(`prepare ${b.n}`)
      await gate(`prepare ${b.n}`).promise
      return b.n
    },
    async commit(b) {
      log.push(`commit ${b.n}`)
      await gate(`commit ${b.n}`).promise
    },
    committed(b) {
      log.push(`committed ${b.n}`)
      b.done.resolve()
    },
    async undo(prepared) {
      undone.push(prepared)
    },
    failed(batches, cause) {
      failures.push({ batches: batches.map((b) => b.n), cause })
      for (const b of batches) b.done.reject(cause)
    },
  }
  const pipeline = new GroupCommit(steps)
  const ticks = () => new Promise((r) => setTimeout(r, 1))
  return { queue, log, gate, failures, undone, pipeline, ticks }
}

test('the next batch prepares while the one before commits; commits keep their order; two in flight at most', async () => {
  const h = harness(3)
  const running = h.pipeline.kick()
  await h.ticks()
  expect(h.log).toEqual(['prepare 1'])
  h.gate('prepare 1').resolve()
  await h.ticks()
  expect(h.log).toEqual(['prepare 1', 'commit 1', 'prepare 2'])
  h.gate('prepare 2').resolve()
  await h.ticks()
  // batch 2 is ready but waits for batch 1's commit; batch 3 does not start meanwhile
  expect(h.log).toEqual(['prepare 1', 'commit 1', 'prepare 2'])
  expect(h.pipeline.inFlight.map((b) => b.n)).toEqual([1, 2])
  h.gate('commit 1').resolve()
  await h.ticks()
  expect(h.log).toEqual(['prepare 1', 'commit 1', 'prepare 2', 'committed 1', 'commit 2', 'prepare 3'])
  h.gate('prepare 3').resolve()
  h.gate('commit 2').resolve()
  h.gate('commit 3').resolve()
  await running
  expect(h.log.filter((l) => l.startsWith('committed'))).toEqual(['committed 1', 'committed 2', 'committed 3'])
  expect(h.failures).toEqual([])
  expect(h.pipeline.inFlight).toEqual([])
})

test('a failed commit fails the batch prepared behind it and undoes only that one', async () => {
  const h = harness(3)
  const running = h.pipeline.kick()
  h.gate('prepare 1').resolve()
  h.gate('prepare 2').resolve()
  await h.ticks()
  const disk = new Error('EIO')
  h.gate('commit 1').reject(disk)
  await running
  expect(h.failures).toEqual([{ batches: [1, 2], cause: disk }])
  expect(h.undone).toEqual([[2]]) // batch 1's rename may have happened: what it prepared stays
  expect(h.log).not.toContain('committed 1')
  expect(h.log).not.toContain('commit 2')
  expect(h.pipeline.inFlight).toEqual([])
})

/** Two batches queued and the first prepared (its commit and the second's prepare still pending). */
async function firstOfTwoPrepared() {
  const h = harness(2)
  const running = h.pipeline.kick()
  h.gate('prepare 1').resolve()
  await h.ticks()
  return { h, running }
}

test('a failed prepare after a good commit fails that batch alone; it cleaned up after itself', async () => {
  const { h, running } = await firstOfTwoPrepared()
  const full = new Error('ENOSPC')
  h.gate('prepare 2').reject(full)
  h.gate('commit 1').resolve()
  await running
  expect(h.log).toContain('committed 1')
  expect(h.failures).toEqual([{ batches: [2], cause: full }])
  expect(h.undone).toEqual([])
})

test('a kick that comes after the writer last found nothing to take is not lost', async () => {
  const h = harness(0)
  let added = false
  const steps = h.pipeline as unknown as { steps: BatchSteps<B, number> }
  const take = steps.steps.take
  // the moment the writer finds the queue empty, a transaction adds a batch and kicks
  steps.steps.take = () => {
    const b = take()
    if (b === undefined && !added) {
      added = true
      queueMicrotask(() => {
        h.queue.push({ n: 9, done: deferred<void>() })
        void h.pipeline.kick()
      })
    }
    return b
  }
  h.gate('prepare 9').resolve()
  h.gate('commit 9').resolve()
  await h.pipeline.kick()
  await h.pipeline.idle()
  expect(h.log).toEqual(['prepare 9', 'commit 9', 'committed 9'])
})

test('when the commit before fails and this prepare fails too, both fail with the first cause and nothing is undone', async () => {
  const { h, running } = await firstOfTwoPrepared()
  const first = new Error('EIO on rename')
  h.gate('prepare 2').reject(new Error('ENOSPC'))
  await h.ticks()
  h.gate('commit 1').reject(first)
  await running
  expect(h.failures).toEqual([{ batches: [1, 2], cause: first }])
  expect(h.undone).toEqual([])
})
