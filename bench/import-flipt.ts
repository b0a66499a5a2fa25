/**
 * The Flipt row of the imports from other tools (docs/migrations.md#from-flipt, goal under 2 s): a
 * `flipt export` of 10,000 flags (variant flags with attachments, rules on segments and splits,
 * boolean flags with rollouts) as YAML, imported whole by `PUT /api/migrations?format=flipt`
 * (bench/imports.ts): read, translated, validated and committed. Run alone: `bun bench/imports.ts flipt`.
 */

/** A realistic export: a few shared segments, three kinds of flags in turn. */
export function fliptExportYaml(n: number): string {
  const lines = ['version: "1.4"', 'namespace: production', 'flags:']
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0)
      lines.push(
        `- key: checkout-${i}`,
        '  type: VARIANT_FLAG_TYPE',
        `  description: Checkout experiment ${i}`,
        '  enabled: true',
        '  variants:',
        '  - key: control',
        '    default: true',
        '    attachment: {layout: classic, steps: 3}',
        '  - key: treatment',
        '    attachment: {layout: compact, steps: 2}',
        '  rules:',
        `  - segment: {keys: [staff, eu-${i % 10}], operator: OR_SEGMENT_OPERATOR}`,
        '    distributions: [{variant: treatment, rollout: 100}]',
        '  - segment: everyone',
        '    distributions: [{variant: control, rollout: 75}, {variant: treatment, rollout: 25}]',
      )
    else if (i % 3 === 1)
      lines.push(
        `- key: switch-${i}`,
        '  type: BOOLEAN_FLAG_TYPE',
        '  enabled: false',
        '  rollouts:',
        '  - segment: {key: staff, value: true}',
        '  - threshold: {percentage: 20, value: true}',
      )
    else lines.push(`- key: theme-${i}`, '  type: VARIANT_FLAG_TYPE', '  enabled: true', '  variants: [{key: light}, {key: dark}]')
  }
  lines.push(
    'segments:',
    '- key: everyone',
    '  match_type: ALL_MATCH_TYPE',
    '- key: staff',
    '  match_type: ANY_MATCH_TYPE',
    '  constraints:',
  )
  lines.push('  - {type: STRING_COMPARISON_TYPE, property: role, operator: eq, value: employee}')
  lines.push('  - {type: ENTITY_ID_COMPARISON_TYPE, property: id, operator: isoneof, value: \'["admin-1","admin-2"]\'}')
  for (let r = 0; r < 10; r++)
    lines.push(
      `- key: eu-${r}`,
      '  match_type: ALL_MATCH_TYPE',
      '  constraints:',
      `  - {type: STRING_COMPARISON_TYPE, property: region, operator: isoneof, value: '["de","fr","nl"]'}`,
      `  - {type: NUMBER_COMPARISON_TYPE, property: build, operator: gte, value: "${r}"}`,
    )
  return `${lines.join('\n')}\n`
}
