/**
 * The client address used for login throttling: the socket peer, or the first X-Forwarded-For hop
 * when the peer is a proxy listed in `trustProxy` (contract §2).
 */

/** Resolves the client address of a request. */
export function clientAddress(request: Request, peer: string, trustProxy: readonly string[]): string {
  if (!trustProxy.includes(peer)) return peer
  const forwarded = request.headers.get('x-forwarded-for')
  const first = forwarded?.split(',')[0]?.trim()
  return first && first.length <= 64 ? first : peer
}
