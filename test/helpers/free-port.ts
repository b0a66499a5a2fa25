/** A free port for servers that must be told one; kept apart from `daemon.ts`, which builds flagd's bundle as it loads. */

/** A port that was free a moment ago (for servers that cannot bind port 0 and report it, such as PostgreSQL). */
export function freePort(): number {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('') })
  const port = probe.port as number
  probe.stop(true)
  return port
}
