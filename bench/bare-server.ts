/**
 * Baseline for the benchmark: a bare Bun.serve answering every request with the bytes of a file.
 * With `read-body` it first reads the request's body, as any server of a POST route must: on this
 * machine that alone costs about a third of a bare request (bun bench/contest.ts).
 */

const [port, file, mode] = [Number(process.argv[2]), process.argv[3] as string, process.argv[4]]
const body = await Bun.file(file).bytes()
const headers = { 'content-type': 'application/json; charset=utf-8' }
Bun.serve({
  hostname: '127.0.0.1',
  port,
  development: false,
  fetch:
    mode === 'read-body'
      ? async (request) => {
          await request.text()
          return new Response(body, { headers })
        }
      : () => new Response(body, { headers }),
})
console.log('ready')

export {}
