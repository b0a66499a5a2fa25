/**
 * Runs a crash-test child that prints `ready` and then one line per acknowledged change, and kills it
 * with SIGKILL at a random moment 20–170 ms after `ready`. Answers the acknowledged lines.
 */
export async function runAndKill(argv: string[]): Promise<string[]> {
  const child = Bun.spawn([process.execPath, ...argv], { stdout: 'pipe', stderr: 'inherit' })
  const acked: string[] = []
  const reader = child.stdout.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let killAt = Number.POSITIVE_INFINITY
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    const lines = buffer.split('\n')
    buffer = lines.pop() ?? ''
    for (const line of lines) {
      if (line === 'ready') killAt = Date.now() + 20 + Math.random() * 150
      else if (line) acked.push(line)
    }
    if (Date.now() >= killAt) break
  }
  child.kill('SIGKILL')
  await child.exited
  return acked
}
