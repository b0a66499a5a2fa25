/** logger.ts's unbuffered logs (a terminal, a test's stream): an access line carries the same fields as the daemon's batched JSON line. */

import { expect, test } from 'bun:test'
import { unbufferedLogging } from '../../src/observability/logger.ts'
import { capturedLogger } from '../helpers/captured-logger.ts'

const capture = () => capturedLogger({ base: { service: 'flagd' } })

const event = {
  method: 'GET',
  path: '/api/flags/a',
  route: '/api/flags/{flagName}',
  status: 200,
  seconds: 0.00123,
  requestId: 'req-1',
  userId: 'u_1',
  tokenId: undefined,
  at: 1,
}

test('an access line has the fields of the batched one: no route template, no epoch time, a rounded duration', async () => {
  const { logger, lines } = capture()
  unbufferedLogging(logger).access(event)
  await Bun.sleep(5)
  expect(lines).toHaveLength(1)
  const { time, ...rest } = lines[0] as Record<string, unknown>
  expect(typeof time).toBe('number')
  expect(rest).toEqual({
    level: 30,
    service: 'flagd',
    method: 'GET',
    path: '/api/flags/a',
    status: 200,
    durationMs: 1.2,
    requestId: 'req-1',
    userId: 'u_1',
    msg: 'request',
  })
})

test('with the access log off (a level above info) nothing is written', async () => {
  const { logger, lines } = capture()
  unbufferedLogging(logger, false).access(event)
  await Bun.sleep(5)
  expect(lines).toEqual([])
})
