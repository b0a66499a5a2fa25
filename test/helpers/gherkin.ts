/**
 * Just enough Gherkin to run flagd-testbed's evaluator features as they are: features, tags,
 * backgrounds, scenarios and scenario outlines with tagged `Examples` tables, steps with a data table.
 */

/** One step, with its data table when it has one. */
export interface Step {
  text: string
  table?: string[][]
}

/** One runnable scenario (an outline expanded per example row). */
export interface Scenario {
  feature: string
  name: string
  tags: string[]
  steps: Step[]
}

const cells = (line: string) =>
  line
    .trim()
    .slice(1, -1)
    .split(/(?<!\\)\|/)
    .map((c) => c.trim())

/** The scenarios of one feature file. */
export function parseFeature(text: string): Scenario[] {
  const lines = text.split('\n').map((l) => l.replace(/\s+#.*$/, '').replace(/^\s*#.*$/, ''))
  let feature = ''
  let featureTags: string[] = []
  let pendingTags: string[] = []
  let background: Step[] = []
  const out: Scenario[] = []
  let current: { name: string; tags: string[]; steps: Step[]; outline: boolean } | undefined
  let exampleTags: string[] = []
  let header: string[] | undefined
  let inBackground = false
  let target: Step[] | undefined
  for (const raw of lines) {
    const line = raw.trim()
    if (line === '') continue
    if (line.startsWith('@')) {
      pendingTags.push(...line.split(/\s+/))
      continue
    }
    if (line.startsWith('Feature:')) {
      feature = line.slice(8).trim()
      featureTags = pendingTags
      pendingTags = []
    } else if (line.startsWith('Background:')) {
      inBackground = true
      target = background = []
    } else if (line.startsWith('Scenario')) {
      inBackground = false
      const outline = line.startsWith('Scenario Outline:')
      current = { name: line.slice(line.indexOf(':') + 1).trim(), tags: [...featureTags, ...pendingTags], steps: [...background], outline }
      pendingTags = []
      target = current.steps
      if (!outline) out.push({ feature, name: current.name, tags: current.tags, steps: current.steps })
    } else if (line.startsWith('Examples')) {
      exampleTags = pendingTags
      pendingTags = []
      header = undefined
      target = undefined
    } else if (line.startsWith('|')) {
      if (target) {
        const last = target.at(-1) as Step
        last.table = [...(last.table ?? []), cells(line)]
      } else if (current && !header) header = cells(line)
      else if (current && header) {
        const row = cells(line)
        const fill = (s: string) => s.replace(/<([^>]+)>/g, (_, k) => row[(header as string[]).indexOf(k)] ?? '')
        out.push({
          feature,
          name: `${current.name} [${row.join(' | ')}]`,
          tags: [...current.tags, ...exampleTags],
          steps: current.steps.map((s) => ({ text: fill(s.text), ...(s.table ? { table: s.table } : {}) })),
        })
      }
    } else if (/^(Given|When|Then|And|But)\b/.test(line)) {
      if (!target) continue
      target.push({ text: line.replace(/^(Given|When|Then|And|But)\s+/, '') })
      if (inBackground) background = target
    }
  }
  return out
}
