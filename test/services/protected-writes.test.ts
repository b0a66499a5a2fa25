/**
 * Protection and permission are properties of the write itself (docs/change-control.md#one-check-for-every-path):
 * every service method that writes flag rows or segments is listed here, and each is refused in a
 * protected environment without `flag:bypass` (nothing changes), goes through with it (audited
 * `bypass: true`) and through an approved change request. The list is checked against the
 * services' source, so a new write site cannot be forgotten.
 */

import { afterEach, expect, test } from 'bun:test'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { Caller, Principal, SystemName } from '../../src/domain/principal.ts'
import type { Services } from '../../src/services/services.ts'
import { createTestApp, SYSTEM, type TestApp } from '../helpers/test-app.ts'

let apps: TestApp[] = []
afterEach(async () => {
  for (const a of apps) await a.close()
  apps = []
})

const user = (id: string, permissions: string[], via?: 'ui'): Caller => ({
  principal: { kind: 'user', userId: id, username: id, sessionId: `ses_${id}`, permissions, flagPrefixes: [] } as Principal,
  requestId: `req_${id}`,
  ...(via ? { via } : {}),
})
const system = (name: SystemName): Caller => ({ principal: { kind: 'system', name }, requestId: `req_${name}` })
const WRITER = ['flag:read', 'flag:write', 'migration:write']
const dev = user('usr_dev', WRITER)
const bypasser = user('usr_bypass', [...WRITER, 'flag:bypass@production'])
const lead = user('usr_lead', ['flag:read', 'flag:approve@production'])

/**
 * production (protected, one approval, the default) and staging; segment `beta`; flag `f` (INTEGER,
 * variants low/high, a rule on `beta`, metadata `team: core, tier: 1` since revision 4) at 3 in production
 * after 1, 7 in staging.
 */
async function world(): Promise<{ a: TestApp; s: Services; served: () => string }> {
  const a = await createTestApp({ FLAGD_ENVIRONMENT: 'production' })
  apps.push(a)
  const s = a.app.services
  await s.environments.put(SYSTEM, 'staging', {})
  await s.segments.put(SYSTEM, 'beta', { rule: { in: [{ var: 'plan' }, ['beta']] } })
  await s.segments.put(SYSTEM, 'unused', { rule: { in: [{ var: 'plan' }, ['x']] } })
  await s.flags.create(SYSTEM, {
    name: 'f',
    type: 'INTEGER',
    value: 1,
    variants: { low: 1, high: 9 },
    targeting: { if: [{ $ref: 'beta' }, 'high', 'low'] },
  })
  await s.flags.update(SYSTEM, 'f', { value: 3 })
  await s.flags.update(SYSTEM, 'f', { value: 7 }, undefined, undefined, 'staging')
  await s.flags.update(SYSTEM, 'f', { metadata: { team: 'core', tier: 1 } })
  await s.environments.put(SYSTEM, 'production', { protected: true, requiredApprovals: 1 })
  // what production serves: its flags as it sees them, and the segments
  const served = () =>
    JSON.stringify({ flags: s.flags.list(SYSTEM.principal, '', 'production'), segments: s.segments.list(SYSTEM.principal) })
  return { a, s, served }
}

/** The import of `f` at value 5 into production (a state change), as a document. */
function importDocument(s: Services): unknown {
  const { document } = s.migrations.exportDocument(SYSTEM.principal, 'production')
  const doc = JSON.parse(JSON.stringify(document))
  doc.flags.f.value = 5
  return doc
}

/**
 * An import into staging that changes `f`'s shared fields (its default value unless `shared` says
 * otherwise; production serves them too), and the segments in `segments`.
 */
function stagingDocument(s: Services, shared: Record<string, unknown> = { defaultValue: 5 }, segments = {}): unknown {
  const { document } = s.migrations.exportDocument(SYSTEM.principal, 'staging')
  const doc = JSON.parse(JSON.stringify(document))
  Object.assign(doc.flags.f, shared)
  if (shared.type === 'NUMBER') doc.flags.f.value = 7.5
  Object.assign(doc.segments, segments)
  return doc
}

/** A replacing import into staging of the segments alone: `f` is left out, so it goes. */
function withoutFlags(s: Services): unknown {
  const { document } = s.migrations.exportDocument(SYSTEM.principal, 'staging')
  return { ...JSON.parse(JSON.stringify(document)), flags: {} }
}

interface WritePath {
  name: string
  /** The service file whose transaction writes the rows. */
  file: string
  write(s: Services, as: Caller): Promise<unknown>
  /** The same change as a change request (`undefined`: the path is not a flag change, e.g. a segment). */
  requested?: { flag: string; set?: Record<string, unknown>; delete?: true }
}

const PATHS: WritePath[] = [
  {
    name: 'API: PUT a state',
    file: 'flag-service.ts',
    write: (s, as) => s.flags.update(as, 'f', { value: 2 }),
    requested: { flag: 'f', set: { value: 2 } },
  },
  {
    name: 'UI: switch it off',
    file: 'flag-service.ts',
    write: (s, as) => s.flags.update({ ...as, via: 'ui' }, 'f', { enabled: false }),
    requested: { flag: 'f', set: { enabled: false } },
  },
  {
    name: 'API: PUT the default value (shared)',
    file: 'flag-service.ts',
    write: (s, as) => s.flags.update(as, 'f', { defaultValue: 4 }),
    requested: { flag: 'f', set: { defaultValue: 4 } },
  },
  {
    name: 'API: PUT the type (shared)',
    file: 'flag-service.ts',
    write: (s, as) => s.flags.update(as, 'f', { type: 'NUMBER' }),
    requested: { flag: 'f', set: { type: 'NUMBER' } },
  },
  {
    name: "API: PUT a variant's value (shared)",
    file: 'flag-service.ts',
    write: (s, as) => s.flags.update(as, 'f', { variants: { low: 1, high: 10 } }),
    requested: { flag: 'f', set: { variants: { low: 1, high: 10 } } },
  },
  {
    name: 'API: DELETE the flag',
    file: 'flag-service.ts',
    write: (s, as) => s.flags.remove(as, 'f'),
    requested: { flag: 'f', delete: true },
  },
  {
    name: "API: PUT a variant's value named through staging (shared)",
    file: 'flag-service.ts',
    write: (s, as) => s.flags.update(as, 'f', { variants: { low: 1, high: 11 } }, undefined, undefined, 'staging'),
    requested: { flag: 'f', set: { variants: { low: 1, high: 11 } } },
  },
  {
    name: 'import into staging changing the default value (shared)',
    file: 'migration-apply.ts',
    write: (s, as) =>
      s.migrations.importDocument(
        as,
        stagingDocument(s),
        { mode: 'merge', values: 'overwrite', dryRun: false, environment: 'staging' },
        'import-upload',
      ),
    requested: { flag: 'f', set: { defaultValue: 5 } },
  },
  {
    name: 'rollback to revision 1',
    file: 'flag-service.ts',
    write: (s, as) => s.audit.rollback(as, 'f', 1),
    requested: { flag: 'f', set: { value: 1 } },
  },
  {
    name: 'promotion from staging',
    file: 'environment-promotion.ts',
    write: (s, as) => s.environments.promote(as, 'production', { from: 'staging' }),
    requested: { flag: 'f', set: { value: 7 } },
  },
  {
    name: 'import upload',
    file: 'migration-apply.ts',
    write: (s, as) =>
      s.migrations.importDocument(as, importDocument(s), { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload'),
    requested: { flag: 'f', set: { value: 5 } },
  },
  {
    name: 'segment change that its rule uses',
    file: 'segment-service.ts',
    write: (s, as) => s.segments.put(as, 'beta', { rule: { in: [{ var: 'plan' }, ['beta', 'gamma']] } }),
  },
  {
    name: "API: PUT a new variant that takes over the name production's answer uses (shared)",
    file: 'flag-service.ts',
    write: (s, as) => s.flags.update(as, 'f', { variants: { low: 1, high: 9, three: 3 } }),
    requested: { flag: 'f', set: { variants: { low: 1, high: 9, three: 3 } } },
  },
  {
    name: "API: PUT a new variant named `value`, the name production's answer uses (shared)",
    file: 'flag-service.ts',
    write: (s, as) => s.flags.update(as, 'f', { variants: { low: 1, high: 9, value: 8 } }),
    requested: { flag: 'f', set: { variants: { low: 1, high: 9, value: 8 } } },
  },
  {
    name: 'API: PUT the metadata (shared, served by OFREP, the RPC service and sync)',
    file: 'flag-service.ts',
    write: (s, as) => s.flags.update(as, 'f', { metadata: { team: 'payments' } }),
    requested: { flag: 'f', set: { metadata: { team: 'payments' } } },
  },
  {
    name: 'import into staging changing the metadata (shared)',
    file: 'migration-apply.ts',
    write: (s, as) =>
      s.migrations.importDocument(
        as,
        stagingDocument(s, { metadata: { team: 'payments' } }),
        { mode: 'merge', values: 'overwrite', dryRun: false, environment: 'staging' },
        'import-upload',
      ),
    requested: { flag: 'f', set: { metadata: { team: 'payments' } } },
  },
  {
    name: 'import into staging adding a variant that takes over the answer (shared)',
    file: 'migration-apply.ts',
    write: (s, as) =>
      s.migrations.importDocument(
        as,
        stagingDocument(s, { variants: { low: 1, high: 9, three: 3 } }),
        { mode: 'merge', values: 'overwrite', dryRun: false, environment: 'staging' },
        'import-upload',
      ),
    requested: { flag: 'f', set: { variants: { low: 1, high: 9, three: 3 } } },
  },
  {
    name: 'import into staging changing the type (shared)',
    file: 'migration-apply.ts',
    write: (s, as) =>
      s.migrations.importDocument(
        as,
        stagingDocument(s, { type: 'NUMBER' }),
        { mode: 'merge', values: 'overwrite', dryRun: false, environment: 'staging' },
        'import-upload',
      ),
    requested: { flag: 'f', set: { type: 'NUMBER' } },
  },
  {
    name: 'import with replace leaving the flag out (a deletion)',
    file: 'migration-apply.ts',
    write: (s, as) =>
      s.migrations.importDocument(
        as,
        withoutFlags(s),
        { mode: 'replace', values: 'overwrite', dryRun: false, environment: 'staging' },
        'import-upload',
      ),
    requested: { flag: 'f', delete: true },
  },
  {
    name: 'import changing a segment that its rule uses',
    file: 'migration-apply.ts',
    write: (s, as) =>
      s.migrations.importDocument(
        as,
        stagingDocument(s, {}, { beta: { rule: { in: [{ var: 'plan' }, ['beta', 'gamma']] } } }),
        { mode: 'merge', values: 'overwrite', dryRun: false, environment: 'staging' },
        'import-upload',
      ),
  },
  {
    name: 'API: archive the flag (every environment stops serving it)',
    file: 'flag-archive.ts',
    write: (s, as) => s.flags.archive(as, 'f'),
  },
  {
    name: 'rollback in staging to before the metadata was set (shared)',
    file: 'flag-service.ts',
    write: (s, as) => s.audit.rollback(as, 'f', 3, undefined, 'staging'),
    requested: { flag: 'f', set: { metadata: null } },
  },
]

/** The change request of `change` in production, by `dev`, approved by `lead`, applied by `dev`. */
async function throughRequest(s: Services, change: NonNullable<WritePath['requested']>) {
  const made = await s.changeRequests.create(dev, { environment: 'production', title: 'reviewed', changes: [change] })
  await s.changeRequests.approve(lead, made.id, {})
  return s.changeRequests.apply(dev, made.id)
}

test('the list of write paths covers every service file that writes flag rows or segments', () => {
  const dir = join(import.meta.dir, '../../src/services')
  const writers = readdirSync(dir).filter((file) => /tx\.(put|delete)\('(flags|segments)'/.test(readFileSync(join(dir, file), 'utf8')))
  // environment-service copies and drops states of environments being made or removed: never a served change
  // change-request-apply writes what an approved request says: the allowed path of every row below
  // rollout-halt writes a guard's trip, the one write the guard may make alone (rollout-halt.test.ts)
  const covered = new Set([
    ...PATHS.map((p) => p.file),
    'environment-service.ts',
    'change-request-apply.ts',
    'migration-apply.ts',
    'rollout-halt.ts',
  ])
  expect(writers.filter((file) => !covered.has(file))).toEqual([])
})

for (const path of PATHS) {
  test(`${path.name}: refused in a protected environment without flag:bypass, nothing changed; done with it, audited`, async () => {
    const { s, served } = await world()
    const before = served()
    const refused = await path.write(s, dev).catch((err) => err)
    expect(refused).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED', details: { environment: 'production' } })
    expect(served()).toBe(before)
    await path.write(s, bypasser)
    expect(served()).not.toBe(before)
    const { entries } = await s.audit.list(SYSTEM.principal, { limit: 20 })
    expect(entries.some((e) => e.bypass === true && e.actor.id === 'usr_bypass')).toBe(true)
  })
  const change = path.requested
  if (change !== undefined)
    test(`${path.name}: allowed through an approved change request`, async () => {
      const { s, served } = await world()
      const before = served()
      expect((await throughRequest(s, change)).state).toBe('applied')
      expect(served()).not.toBe(before)
    })
}

test('the drop folder and the command line hold no bypass: an import moving production is refused', async () => {
  const { s, served } = await world()
  const before = served()
  // production's state, and shared fields through staging: the metadata, a variant taking the answer over
  const documents = [
    { doc: importDocument(s), environment: 'production' },
    { doc: stagingDocument(s, { metadata: { team: 'payments' } }), environment: 'staging' },
    { doc: stagingDocument(s, { variants: { low: 1, high: 9, three: 3 } }), environment: 'staging' },
  ]
  for (const name of ['drop-folder', 'cli'] as const)
    for (const { doc, environment } of documents) {
      const refused = await s.migrations
        .importDocument(system(name), doc, { mode: 'merge', values: 'overwrite', dryRun: false, environment }, name)
        .catch((err) => err)
      expect(refused).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED', details: { environment: 'production' } })
    }
  expect(served()).toBe(before)
})

test('a flag created while production is protected starts there disabled with no value, whatever the path, unless by flag:bypass', async () => {
  const { s } = await world()
  const doc = (name: string) => {
    const d = JSON.parse(JSON.stringify(s.migrations.exportDocument(SYSTEM.principal, 'production').document))
    d.flags = { [name]: { type: 'STRING', value: 'EVIL', description: '' } }
    return d
  }
  await s.flags.create(dev, { name: 'api', type: 'STRING', value: 'EVIL' })
  await s.migrations.importDocument(dev, doc('upload'), { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
  await s.migrations.importDocument(
    system('drop-folder'),
    doc('dropped'),
    { mode: 'merge', values: 'overwrite', dryRun: false },
    'drop-folder',
  )
  for (const name of ['api', 'upload', 'dropped']) {
    expect(s.flags.get(SYSTEM.principal, name, 'production')).toMatchObject({ valueExists: false, enabled: false })
    expect(s.flags.get(SYSTEM.principal, name, 'staging')).toMatchObject({ value: 'EVIL', enabled: true })
  }
  await s.flags.create(bypasser, { name: 'bypassed', type: 'STRING', value: 'ok' })
  expect(s.flags.get(SYSTEM.principal, 'bypassed', 'production')).toMatchObject({ value: 'ok', enabled: true })
})

test('writes that change nothing production serves need no bypass: descriptions, unused new variants, staging, unused segments, environments', async () => {
  const { s } = await world()
  const answer = () => {
    const { type, defaultValue, variants, valueExists, value, enabled, targeting, metadata } = s.flags.get(
      SYSTEM.principal,
      'f',
      'production',
    )
    return { type, defaultValue, variants: { ...variants, mid: 5 }, valueExists, value, enabled, targeting, metadata }
  }
  const before = answer()
  const admin = user('usr_env', ['environment:write'])
  await s.flags.update(dev, 'f', { description: 'shared words' })
  // a new variant that takes no answer over, the variants or the metadata in another key order
  await s.flags.update(dev, 'f', { variants: { high: 9, low: 1, mid: 5 } })
  await s.flags.update(dev, 'f', { metadata: { tier: 1, team: 'core' } })
  await s.flags.update(dev, 'f', { value: 8 }, undefined, undefined, 'staging')
  await s.segments.put(dev, 'unused', { rule: { in: [{ var: 'plan' }, ['y']] } })
  await s.segments.remove(dev, 'unused')
  await s.environments.put(admin, 'qa', {})
  await s.environments.remove(admin, 'qa')
  expect(answer()).toEqual(before)
  expect(s.flags.get(SYSTEM.principal, 'f', 'production').description).toBe('shared words')
})

test('permissions are checked by the write too: a writer of staging alone cannot reach production through any path', async () => {
  const { s, served } = await world()
  const before = served()
  const stagingOnly = user('usr_staging', ['flag:read', 'flag:write@staging', 'flag:bypass'])
  for (const path of PATHS.slice(0, 2)) expect(await path.write(s, stagingOnly).catch((err) => err)).toMatchObject({ code: 'FORBIDDEN' })
  expect(served()).toBe(before)
})

test('a request of an unprotected environment carries no shared field or deletion past a protected one', async () => {
  const { s, served } = await world()
  const before = served()
  for (const change of [
    { flag: 'f', delete: true },
    { flag: 'f', set: { defaultValue: 4 } },
    { flag: 'f', set: { metadata: { team: 'payments' } } },
  ]) {
    const refused = await s.changeRequests.create(dev, { environment: 'staging', title: 'around', changes: [change] }).catch((err) => err)
    expect(refused).toMatchObject({ code: 'CHANGE_REQUEST_REQUIRED', details: { environment: 'production' } })
  }
  // staging's own state still goes through its requests, applied by an approver with flag:approve alone
  const made = await s.changeRequests.create(dev, { environment: 'staging', title: 'own', changes: [{ flag: 'f', set: { value: 8 } }] })
  expect(made.state).toBe('approved')
  expect((await s.changeRequests.apply(dev, made.id)).state).toBe('applied')
  expect(served()).not.toBe(before)
  expect(s.flags.get(SYSTEM.principal, 'f', 'production').value).toBe(3)
})

test('a dry run says when applying it would be refused with CHANGE_REQUEST_REQUIRED, and changes nothing', async () => {
  const { s, served } = await world()
  const before = served()
  const refusal = { code: 'CHANGE_REQUEST_REQUIRED', details: { environment: 'production' } }
  const intoStaging = { mode: 'merge', values: 'overwrite', dryRun: true, environment: 'staging' } as const
  // a promotion into production, an import of production's state, an import into staging of a shared field
  expect(await s.environments.promote(dev, 'production', { from: 'staging', dryRun: true })).toMatchObject({ applyError: refusal })
  const dry = { mode: 'merge', values: 'overwrite', dryRun: true } as const
  expect(await s.migrations.importDocument(dev, importDocument(s), dry, 'import-upload')).toMatchObject({ applyError: refusal })
  expect(await s.migrations.importDocument(dev, stagingDocument(s), intoStaging, 'import-upload')).toMatchObject({ applyError: refusal })
  expect(await s.migrations.importDocument(system('drop-folder'), importDocument(s), dry, 'drop-folder')).toMatchObject({
    applyError: refusal,
  })
  expect(served()).toBe(before)
  // what applying would do: refused, as the dry run said
  expect(await s.environments.promote(dev, 'production', { from: 'staging' }).catch((err) => err)).toMatchObject(refusal)
  // no refusal to announce: someone holding flag:bypass, a change of staging alone, nothing to change
  expect(await s.environments.promote(bypasser, 'production', { from: 'staging', dryRun: true })).not.toHaveProperty('applyError')
  const stagingOnly = JSON.parse(JSON.stringify(s.migrations.exportDocument(SYSTEM.principal, 'staging').document))
  stagingOnly.flags.f.value = 8
  const ok = await s.migrations.importDocument(dev, stagingOnly, intoStaging, 'import-upload')
  expect(ok).toMatchObject({ summary: { updated: 1 } })
  expect(ok).not.toHaveProperty('applyError')
  expect(await s.environments.promote(dev, 'staging', { from: 'production', dryRun: true })).not.toHaveProperty('applyError')
  expect(served()).toBe(before)
})
