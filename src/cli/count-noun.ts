/** "1 flag", "2 flags": a count with its noun, singular for one (the CLI's summaries say how many of what). */
export function countNoun(n: number, noun: string): string {
  return `${n} ${n === 1 ? noun : `${noun}s`}`
}
