/** The CLI command the start-up hints print: the one that works from where the daemon was started */

import { expect, test } from 'bun:test'
import { cliCommand } from '../../src/daemon.ts'

const onPath = (found: Record<string, string>) => (name: string) => found[name] ?? null

test('from a clone: bun (or npx bun) and the source entry relative to the working directory', () => {
  expect(
    cliCommand(['/usr/bin/bun', '/home/me/flagd/src/main.ts', 'serve'], '/usr/bin/bun', '/home/me/flagd', onPath({ bun: '/usr/bin/bun' })),
  ).toBe('bun src/main.ts')
  expect(cliCommand(['/x/bun', '/home/me/flagd/src/main.ts', 'serve'], '/x/bun', '/home/me/flagd', onPath({}))).toBe('npx bun src/main.ts')
  // `npx bun run start` puts the project's own bun on the daemon's PATH, not on the user's
  const npxBun = '/home/me/flagd/node_modules/.bin/bun'
  expect(cliCommand(['/x/bun', '/home/me/flagd/src/main.ts', 'serve'], '/x/bun', '/home/me/flagd', onPath({ bun: npxBun }))).toBe(
    'npx bun src/main.ts',
  )
  // started from elsewhere: the whole path
  expect(cliCommand(['/usr/bin/bun', '/opt/flagd/src/main.ts', 'serve'], '/usr/bin/bun', '/tmp', onPath({ bun: '/usr/bin/bun' }))).toBe(
    'bun /opt/flagd/src/main.ts',
  )
})

test('from a clone with its bin/ on PATH: flagd, the command the README writes', () => {
  const which = onPath({ bun: '/usr/bin/bun', flagd: '/home/me/flagd/bin/flagd' })
  expect(cliCommand(['/usr/bin/bun', '/home/me/flagd/src/main.ts', 'serve'], '/usr/bin/bun', '/tmp', which)).toBe('flagd')
  // another flagd on PATH is not this checkout's
  const other = onPath({ bun: '/usr/bin/bun', flagd: '/usr/local/bin/flagd' })
  expect(cliCommand(['/usr/bin/bun', '/home/me/flagd/src/main.ts', 'serve'], '/usr/bin/bun', '/home/me/flagd', other)).toBe(
    'bun src/main.ts',
  )
})

test("bin/flagd runs the CLI from any directory with the checkout's Bun", async () => {
  const root = new URL('../..', import.meta.url).pathname
  const proc = Bun.spawn([`${root}bin/flagd`, 'version'], { cwd: '/', stdout: 'pipe', stderr: 'pipe', env: { PATH: '/usr/bin:/bin' } })
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited])
  expect([code, out.trim()]).toEqual([0, (await import('../../package.json')).version])
})

test('the compiled binary: its name when that is what PATH finds, else its path', () => {
  const argv = ['bun', '/$bunfs/root/flagd', 'serve']
  expect(cliCommand(argv, '/usr/local/bin/flagd', '/srv', onPath({ flagd: '/usr/local/bin/flagd' }))).toBe('flagd')
  expect(cliCommand(argv, '/opt/flagd/flagd', '/srv', onPath({}))).toBe('/opt/flagd/flagd')
  expect(cliCommand(argv, '/opt/flagd/flagd', '/srv', onPath({ flagd: '/usr/local/bin/flagd' }))).toBe('/opt/flagd/flagd')
})
