/**
 * The GO Feature Flag import row (docs/migrations.md#from-go-feature-flag): a flag file of 10,000
 * realistic flags (YAML: variations, targeting queries, splits, progressive rollouts, scheduled
 * steps, metadata), imported whole by `PUT /api/migrations?format=gofeatureflag` (bench/imports.ts):
 * read, translated, validated and committed. Run alone: `bun bench/imports.ts gofeatureflag`.
 */

/** One flag of the file, of one of five shapes. */
function flagYaml(i: number): string {
  const head = `team${i % 40}-feature-${i}:\n  metadata:\n    description: Feature ${i} of team ${i % 40}\n    owner: team${i % 40}\n`
  switch (i % 5) {
    case 0:
      return `${head}  variations:\n    on: true\n    off: false\n  targeting:\n    - name: beta\n      query: plan eq "pro" and (beta eq true or seats gt ${i % 50})\n      variation: on\n    - query: country in ["FR", "DE", "IT"]\n      variation: off\n  defaultRule:\n    variation: off\n`
    case 1:
      return `${head}  variations:\n    a: "variant-a"\n    b: "variant-b"\n    c: "variant-c"\n  defaultRule:\n    percentage:\n      a: 33.333\n      b: 33.333\n      c: 33.334\n`
    case 2:
      return `${head}  variations:\n    old: false\n    new: true\n  defaultRule:\n    progressiveRollout:\n      initial:\n        variation: old\n        date: 2026-12-01T00:00:00Z\n      end:\n        variation: new\n        percentage: 100\n        date: 2027-01-01T00:00:00Z\n`
    case 3:
      return `${head}  variations:\n    low: 10\n    high: 100\n  targeting:\n    - query: appVersion ge 2.${i % 9}.0 or age lt 18\n      variation: high\n  defaultRule:\n    variation: low\n  scheduledRollout:\n    - date: 2026-11-01T00:00:00Z\n      disable: false\n    - date: 2027-02-01T00:00:00Z\n      defaultRule:\n        variation: high\n`
    default:
      return `${head}  variations:\n    v1: { limit: 10, engine: classic }\n    v2: { limit: 25, engine: vector }\n  bucketingKey: companyId\n  targeting:\n    - query: role eq "admin" and not (email ew ".org")\n      percentage:\n        v1: 20\n        v2: 80\n  defaultRule:\n    variation: v1\n`
  }
}

/** A GO Feature Flag file of `n` flags, as YAML. */
export const goFeatureFlagYaml = (n: number): string => Array.from({ length: n }, (_, i) => flagYaml(i)).join('\n')
