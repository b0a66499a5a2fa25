/** Baseline for the benchmark: a bare Bun.serve answering every request with the bytes of a file. */

const [port, file] = [Number(process.argv[2]), process.argv[3] as string]
const body = await Bun.file(file).bytes()
Bun.serve({
  hostname: '127.0.0.1',
  port,
  development: false,
  fetch: () => new Response(body, { headers: { 'content-type': 'application/json; charset=utf-8' } }),
})
console.log('ready')
export {}
