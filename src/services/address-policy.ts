/**
 * Which addresses a URL import may reach (docs/migrations.md): public unicast only, classified with
 * ipaddr.js (loopback, private incl. 100.64/10 and fc00::/7, link-local, multicast, unspecified,
 * broadcast, reserved, and IPv4-mapped forms of these are refused), unless the URL's host is listed
 * in `import.allowedHosts` (names match names; IPs and CIDRs match only IP literals).
 */

import ipaddr from 'ipaddr.js'

/** Strips the brackets WHATWG URL keeps around IPv6 hosts. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

/** The range name of a non-public address, or `undefined` when it is public unicast. */
export function nonPublicRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'not an IP address'
  let parsed = ipaddr.parse(address)
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address()
  const range = parsed.range()
  return range === 'unicast' ? undefined : range
}

/** True when `host` (a URL hostname without brackets) is covered by an `allowedHosts` entry. */
export function isAllowedHost(host: string, allowedHosts: readonly string[]): boolean {
  const name = host.toLowerCase().replace(/\.$/, '')
  const literal = ipaddr.isValid(host) ? ipaddr.parse(host) : undefined
  for (const entry of allowedHosts) {
    if (entry.includes('/')) {
      if (!literal || !ipaddr.isValidCIDR(entry)) continue
      const [net, bits] = ipaddr.parseCIDR(entry)
      if (net.kind() === literal.kind() && literal.match([net, bits] as never)) return true
    } else if (ipaddr.isValid(entry)) {
      if (
        literal &&
        literal.kind() === ipaddr.parse(entry).kind() &&
        literal.toNormalizedString() === ipaddr.parse(entry).toNormalizedString()
      )
        return true
    } else if (!literal && entry.toLowerCase().replace(/\.$/, '') === name) return true
  }
  return false
}
