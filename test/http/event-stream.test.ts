/** The stream hub: catch-up fed as the client reads, live events after it, and a bound on unread bytes. */

import { expect, test } from 'bun:test'
import type { Principal } from '../../src/domain/principal.ts'
import { createStreamHub, MAX_BACKLOG_BYTES } from '../../src/http/event-stream.ts'

const principal = { kind: 'system' } as unknown as Principal
const decoder = new TextDecoder()

async function readAll(body: ReadableStream<Uint8Array>, until: (text: string) => boolean): Promise<string> {
  const reader = body.getReader()
  let text = ''
  while (!until(text)) {
    const { value, done } = await reader.read()
    if (done) break
    text += decoder.decode(value)
  }
  reader.releaseLock()
  return text
}

test('catch-up pieces are pulled as the client reads, never all at once; live events wait and follow them', async () => {
  const hub = createStreamHub(60_000)
  let pulled = 0
  const piece = `${'x'.repeat(100 * 1024)}\n`
  const res = hub.open({
    kind: 'changes',
    principal,
    stillValid: () => true,
    requestId: 'r',
    catchUp: async () => (++pulled <= 20 ? `piece ${pulled} ${piece}` : undefined),
  })
  await Bun.sleep(50)
  // nobody reads: only what fills the stream's small buffer has been asked for
  expect(pulled).toBeLessThanOrEqual(2)
  hub.broadcast(() => 'live 1\n')
  hub.broadcast(() => 'live 2\n')
  const text = await readAll(res.body as ReadableStream<Uint8Array>, (t) => t.includes('live 2'))
  expect(pulled).toBe(21)
  const order = [...text.matchAll(/(piece \d+|live \d)/g)].map((m) => m[1])
  expect(order).toEqual([...Array.from({ length: 20 }, (_, i) => `piece ${i + 1}`), 'live 1', 'live 2'])
  hub.closeAll()
})

test('a client that stops reading is closed once its unread events pass the backlog bound', async () => {
  const hub = createStreamHub(60_000)
  let closed = false
  const res = hub.open({ kind: 'changes', principal, stillValid: () => true, requestId: 'r', onClose: () => (closed = true) })
  await Bun.sleep(10)
  const event = `data: ${'y'.repeat(1000)}\n\n`
  for (let i = 0; i < (MAX_BACKLOG_BYTES / event.length) * 0.9; i++) hub.broadcast(() => event)
  expect(closed).toBe(false)
  expect(hub.size).toBe(1)
  for (let i = 0; i < (MAX_BACKLOG_BYTES / event.length) * 0.2; i++) hub.broadcast(() => event)
  expect(closed).toBe(true)
  expect(hub.size).toBe(0)
  await res.body?.cancel()
})

test('a client that stops reading behind a catch-up is closed too: the waiting events are bounded', async () => {
  const hub = createStreamHub(60_000)
  let closed = false
  hub.open({
    kind: 'changes',
    principal,
    stillValid: () => true,
    requestId: 'r',
    catchUp: async () => 'z'.repeat(100 * 1024),
    onClose: () => (closed = true),
  })
  await Bun.sleep(10)
  const event = `data: ${'y'.repeat(1000)}\n\n`
  for (let i = 0; i < (MAX_BACKLOG_BYTES / event.length) * 1.1 && !closed; i++) hub.broadcast(() => event)
  expect(closed).toBe(true)
})

test('a catch-up that fails closes the stream (the client reconnects) instead of erroring the response', async () => {
  const hub = createStreamHub(60_000)
  const res = hub.open({
    kind: 'changes',
    principal,
    stillValid: () => true,
    requestId: 'r',
    catchUp: async () => {
      throw new Error('disk')
    },
  })
  const text = await readAll(res.body as ReadableStream<Uint8Array>, () => false)
  expect(text).toContain(': connected')
  expect(hub.size).toBe(0)
})
