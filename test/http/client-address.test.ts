/** The client address behind proxies (docs/api.md#authentication): rightmost untrusted hop, CIDR ranges. */

import { expect, test } from 'bun:test'
import { createClientAddress } from '../../src/http/client-address.ts'

const req = (xff?: string) => new Request('http://localhost/', { headers: xff === undefined ? {} : { 'x-forwarded-for': xff } })

test.each<[string[], string, string | undefined, string]>([
  [[], '203.0.113.5', '198.51.100.1', '203.0.113.5'], // no proxy trusted: the header is ignored
  [['10.0.0.1'], '203.0.113.5', '198.51.100.1', '203.0.113.5'], // an untrusted peer's header is ignored
  [['10.0.0.1'], '10.0.0.1', '198.51.100.1', '198.51.100.1'],
  [['10.0.0.1'], '10.0.0.1', 'chosen-by-client, 198.51.100.1', '198.51.100.1'], // nginx appends: the left part is the client's
  [['10.0.0.1'], '10.0.0.1', '192.0.2.66, 198.51.100.1', '198.51.100.1'],
  [['10.0.0.0/8'], '10.1.2.3', '198.51.100.1, 10.9.9.9', '198.51.100.1'], // a chain of trusted proxies
  [['10.0.0.0/8'], '::ffff:10.1.2.3', '198.51.100.1', '198.51.100.1'], // IPv4-mapped peer
  [['10.0.0.0/8'], '10.1.2.3', '10.0.0.7, 10.0.0.8', '10.0.0.7'], // all trusted: the leftmost
  [['10.0.0.0/8'], '10.1.2.3', undefined, '10.1.2.3'], // no header: the peer
  [['fd00::/8'], 'fd00::1', '2001:db8::1', '2001:db8::1'],
])('trust %j, peer %s, X-Forwarded-For %j → %s', (trust, peer, xff, expected) => {
  expect(createClientAddress(trust)(req(xff), peer)).toBe(expected)
})

test('an unparseable hop is bounded in length', () => {
  expect(createClientAddress(['10.0.0.1'])(req('x'.repeat(10_000)), '10.0.0.1')).toHaveLength(64)
})
