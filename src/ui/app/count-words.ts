/** Counted nouns as the UI writes them (docs/ui.md#times): "1 evaluation", "2 evaluations", "0 flags". */

/** `n` and the noun, singular for exactly one: `countOf(1, 'evaluation')` → "1 evaluation". */
export function countOf(n: number, singular: string, plural = `${singular}s`): string {
  return `${n.toLocaleString('en')} ${n === 1 ? singular : plural}`
}
