/**
 * The client address used for login throttling (docs/api.md#authentication): the socket peer or, when the peer is
 * a trusted proxy (config `trustProxy`: addresses or CIDR ranges), the rightmost `X-Forwarded-For`
 * hop that is not itself a trusted proxy. Proxies append the address they received from, so the
 * rightmost untrusted hop is the last one a trusted proxy vouched for; anything to its left was
 * written by the client and is never believed. Addresses are compared in canonical form
 * (`::ffff:10.0.0.1` is `10.0.0.1`), with ipaddr.js.
 */

import ipaddr from 'ipaddr.js'

const MAX_ADDRESS_LENGTH = 64

/** Canonical text of an IP address (IPv4-mapped IPv6 as IPv4), or `undefined` when it is none. */
export function canonicalAddress(text: string): string | undefined {
  if (!ipaddr.isValid(text)) return undefined
  const parsed = ipaddr.process(text)
  return parsed.toString()
}

/** Resolves the client address of a request from its peer and headers. */
export type ClientAddressOf = (request: Request, peer: string) => string

/** Builds the resolver for a `trustProxy` list. */
export function createClientAddress(trustProxy: readonly string[]): ClientAddressOf {
  const ranges = trustProxy.map((entry) =>
    entry.includes('/')
      ? ipaddr.parseCIDR(entry)
      : ([ipaddr.process(entry), ipaddr.process(entry).kind() === 'ipv4' ? 32 : 128] as [ipaddr.IPv4 | ipaddr.IPv6, number]),
  )
  const trusted = (address: string): boolean => {
    if (!ipaddr.isValid(address)) return false
    const ip = ipaddr.process(address)
    return ranges.some(([net, bits]) => net.kind() === ip.kind() && ip.match(net as never, bits))
  }
  const bounded = (text: string) => canonicalAddress(text) ?? text.slice(0, MAX_ADDRESS_LENGTH)
  return (request, peer) => {
    if (ranges.length === 0 || !trusted(peer)) return bounded(peer)
    const hops = (request.headers.get('x-forwarded-for') ?? '')
      .split(',')
      .map((h) => h.trim())
      .filter((h) => h.length > 0)
    for (let i = hops.length - 1; i >= 0; i--) if (!trusted(hops[i] as string)) return bounded(hops[i] as string)
    return bounded(hops[0] ?? peer)
  }
}
