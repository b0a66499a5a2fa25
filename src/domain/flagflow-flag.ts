/**
 * FlagFlow 1.7's own field names in an imported flag (docs/migrations.md), read as flagd's.
 */

const FLAGFLOW_FIELDS = ['regExp', 'tagValues', 'chanceBPercent', 'allowEmpty', 'isKillSwitch']

/** Rewrites a flag written with FlagFlow's own field names into flagd's (docs/migrations.md). */
export function fromFlagFlow(
  raw: Record<string, unknown>,
  problem: (field: string, reason: string) => void,
  warning: (field: string, reason: string) => void = () => {},
): Record<string, unknown> {
  if (!FLAGFLOW_FIELDS.some((k) => Object.hasOwn(raw, k))) return raw
  const out: Record<string, unknown> = { ...raw }
  const rename = (from: string, to: string) => {
    if (!Object.hasOwn(out, from)) return
    if (Object.hasOwn(out, to)) problem(from, `cannot be given together with ${to}`)
    else {
      out[to] = out[from]
      warning(from, `FlagFlow's ${from}, read as ${to}`)
    }
    delete out[from]
  }
  rename('regExp', 'regexPattern')
  rename('tagValues', 'enumValues')
  rename('chanceBPercent', 'chancePercentB')
  if (out.regexPattern === '') {
    delete out.regexPattern
    warning('regExp', 'an empty FlagFlow pattern means no pattern; dropped')
  }
  for (const key of ['maxLength', 'minCount', 'maxCount']) {
    if (out[key] !== 0) continue
    delete out[key]
    warning(key, 'FlagFlow writes 0 for "no bound"; dropped')
  }
  if (out.type === 'AB-TEST' && !Object.hasOwn(out, 'defaultValue') && !Object.hasOwn(out, 'valueExists')) {
    out.defaultValue = 'A'
    out.valueExists = false
    warning('defaultValue', 'FlagFlow A/B test without a default: defaultValue "A", no value')
  }
  if (Object.hasOwn(out, 'allowEmpty')) warning('allowEmpty', 'FlagFlow field flagd does not have; dropped')
  if (Object.hasOwn(out, 'isKillSwitch')) {
    warning(
      'isKillSwitch',
      `FlagFlow kill-switch marker (${JSON.stringify(out.isKillSwitch)}) dropped: flagd has no kill switches; the flag imports as a plain ${String(out.type)}`,
    )
  }
  delete out.allowEmpty
  delete out.isKillSwitch
  return out
}
