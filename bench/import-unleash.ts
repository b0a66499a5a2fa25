/**
 * The Unleash import's bench row (docs/performance.md): an export of 10,000 realistic features
 * (rollouts, constraints of every kind, user lists, segments, variants with payloads, tags,
 * dependencies), imported whole by `PUT /api/migrations?format=unleash` (bench/imports.ts): read,
 * translated, validated and committed. Run alone: `bun bench/imports.ts unleash`.
 */

/** A realistic export of `n` features in one environment. */
export function unleashExport(n: number) {
  const features = []
  const featureStrategies = []
  const featureEnvironments = []
  const featureTags = []
  const dependencies = []
  const segments = Array.from({ length: 20 }, (_, id) => ({
    id,
    name: `segment ${id}`,
    constraints: [{ contextName: 'country', operator: 'IN', values: ['NO', 'SE', `C${id}`], inverted: false }],
  }))
  for (let i = 0; i < n; i++) {
    const name = `team-${i % 50}.feature-${i}`
    features.push({
      name,
      description: `Feature ${i}`,
      type: ['release', 'experiment', 'operational', 'kill-switch', 'permission'][i % 5],
      project: 'default',
    })
    const variants =
      i % 4 === 0
        ? [
            {
              name: 'control',
              weight: 500,
              stickiness: 'default',
              weightType: 'variable',
              payload: { type: 'json', value: `{"layout":"a","n":${i}}` },
              overrides: [],
            },
            {
              name: 'treatment',
              weight: 500,
              stickiness: 'default',
              weightType: 'variable',
              payload: { type: 'json', value: `{"layout":"b","n":${i}}` },
              overrides: [],
            },
          ]
        : []
    featureEnvironments.push({ enabled: i % 10 !== 0, featureName: name, environment: 'production', variants, name })
    const constraints = [
      { contextName: 'appVersion', operator: 'SEMVER_GT', value: `1.${i % 9}.0`, inverted: false },
      { contextName: 'email', operator: 'STR_ENDS_WITH', values: ['@example.com'], inverted: i % 3 === 0 },
      { contextName: 'orderTotal', operator: 'NUM_GTE', value: String(i % 200), inverted: false },
      { contextName: 'currentTime', operator: 'DATE_AFTER', value: '2026-01-01T00:00:00.000Z', inverted: false },
    ].slice(0, 1 + (i % 4))
    featureStrategies.push({
      name: 'flexibleRollout',
      featureName: name,
      parameters: { rollout: String(i % 101), stickiness: i % 2 === 0 ? 'default' : 'userId', groupId: name },
      constraints,
      variants: [],
      segments: i % 5 === 0 ? [i % 20] : [],
      sortOrder: 0,
      disabled: false,
    })
    featureStrategies.push({
      name: 'userWithId',
      featureName: name,
      parameters: { userIds: Array.from({ length: 10 }, (_, k) => `user-${i}-${k}`).join(',') },
      constraints: [],
      segments: [],
      sortOrder: 1,
      disabled: false,
    })
    featureTags.push({ featureName: name, tagType: 'simple', tagValue: `team-${i % 50}` })
    if (i % 100 === 1)
      dependencies.push({ feature: name, dependencies: [{ feature: `team-${(i - 1) % 50}.feature-${i - 1}`, variants: ['treatment'] }] })
  }
  return { features, featureStrategies, featureEnvironments, featureTags, segments, dependencies, contextFields: [], tagTypes: [] }
}
