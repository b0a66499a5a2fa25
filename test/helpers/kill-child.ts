/**
 * Runs a crash-test child that prints `ready` and then one line per acknowledged change, and kills it
 * with SIGKILL once it has acknowledged a random number (2–60) of changes. Answers the acknowledged lines.
 *
 * The moment is counted in the child's own progress, not in milliseconds: on a slow or busy machine
 * a timed kill could land before any write was acknowledged, and the test's outcome would then depend
 * on the machine's speed. The child keeps writing (8 writers) while the signal is on its way, so the kill
 * still lands at an arbitrary point of a commit, a journal write or a checkpoint.
 */
export async function runAndKill(argv: string[], random: () => number = Math.random): Promise<string[]> {
  const child = Bun.spawn([process.execPath, ...argv], { stdout: 'pipe', stderr: 'inherit' })
  const acked: string[] = []
  const reader = child.stdout.getReader()
  const decoder = new TextDecoder()
  const killAfter = 2 + Math.floor(random() * 59)
  let buffer = ''
  let ready = false
  while (!ready || acked.length < killAfter) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += decoder.decode(value, { stream: true })
    const lines = buffer.split('\n')
    buffer = lines.pop() ?? ''
    for (const line of lines) {
      if (line === 'ready') ready = true
      else if (line) acked.push(line)
    }
  }
  child.kill('SIGKILL')
  await child.exited
  return acked
}
