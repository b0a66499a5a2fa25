/**
 * GO Feature Flag's files imported into a daemon and judged against the tool's own answers
 * (docs/migrations.md#from-go-feature-flag): every generated context gets from OFREP the value the
 * tool's documented semantics give (an oracle in gofeatureflag-oracle.ts), outside percentage shares.
 */

import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import type { ForeignTranslation } from '../../../src/domain/foreign/foreign-translation.ts'
import { translateGoFeatureFlag } from '../../../src/domain/foreign/gofeatureflag-translator.ts'
import { type ServiceWorld, tempServices, userCaller } from '../../helpers/temp-services.ts'
import { SYSTEM } from '../../helpers/test-app.ts'
import { goffValue } from './gofeatureflag-oracle.ts'

const world = tempServices()
const reader = userCaller('usr_app', ['flag:read', 'flag:evaluate'])

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed
  return () => {
    a = (a + 0x6d2b79f5) | 0
    let t = Math.imul(a ^ (a >>> 15), 1 | a)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const CHOICES: Record<string, unknown[]> = {
  plan: ['pro', 'PRO', 'Pro', 'free', 'professional', ''],
  beta: [true, false],
  seats: [0, 10, 10.5, 11, -3, 100],
  country: ['FR', 'fr', 'Fr', 'DE', 'US', 'de'],
  age: [17, 17.9, 18, 18.2, 64.99, 65, -0.5, 0, 0.7, -1],
  score: [3.5, 3.51, 4, -1, 0],
  company: [{ size: 99.9 }, { size: 100 }, { size: 5000 }, {}],
  account: [{ tier: 'gold' }, { tier: null }, {}],
  appVersion: ['2.0.9', '2.1.0', '2.1.0-beta.1', '10.0.0', '2.1.1'],
  member: [true, false],
  vip: [true, false],
  role: ['admin', 'ADMIN', 'Admin', 'user', 'admİn', 'administrator'],
  email: ['a@example.com', 'b@EXAMPLE.COM', 'c@example.org'],
  anonymous: [true, false],
  name: ['alice', 'Bob', 'KELVIN', '\u212Aelvin', 'kel', 'Kel'],
  teamId: ['team-1', 'team-2', ''],
  targetingKey: ['user-001', 'USER-001', 'user-002', 'u', ''],
}

/** `count` contexts, each attribute present about two times in three, with a value of its type. */
function contexts(count: number, seed: number): Record<string, unknown>[] {
  const next = random(seed)
  return Array.from({ length: count }, () => {
    const ctx: Record<string, unknown> = {}
    for (const [name, values] of Object.entries(CHOICES)) if (next() < 0.67) ctx[name] = values[Math.floor(next() * values.length)]
    return ctx
  })
}

async function imported(w: ServiceWorld, raw: unknown): Promise<ForeignTranslation> {
  const t = translateGoFeatureFlag(raw, { nowMs: w.ms() }) as ForeignTranslation
  const doc = {
    environment: 'production',
    version: '1.0.0',
    createdAt: new Date(w.ms()).toISOString(),
    flags: t.flags,
    segments: t.segments,
  }
  await w.s.migrations.importDocument(SYSTEM, doc, { mode: 'merge', values: 'overwrite', dryRun: false }, 'import-upload')
  return t
}

function served(w: ServiceWorld, name: string, ctx: Record<string, unknown>): unknown {
  return w.s.evaluations.one(reader.principal, name, ctx).result?.value
}

/** Every context's answer from OFREP against the tool's, for every imported flag not decided by a share. */
function judge(w: ServiceWorld, raw: Record<string, any>, t: ForeignTranslation, ctxs: Record<string, unknown>[]): number {
  let compared = 0
  for (const [name, def] of Object.entries(t.flags)) {
    const key = (def.metadata as Record<string, string>).originalKey as string
    const flag = raw[key]
    for (const ctx of ctxs) {
      let expected: unknown
      try {
        expected = goffValue(flag, ctx, w.ms())
      } catch {
        continue
      }
      const got = served(w, name, ctx)
      if (!Bun.deepEquals(got, expected))
        throw new Error(`${name} for ${JSON.stringify(ctx)}: flagd ${JSON.stringify(got)}, GO Feature Flag ${JSON.stringify(expected)}`)
      compared++
    }
  }
  return compared
}

const QUERIES = [
  'plan eq "pro"',
  'plan == "PRO"',
  'plan ne "pro"',
  'plan != "free"',
  'plan co "RO"',
  'plan sw "pr"',
  'plan ew "o"',
  'plan in ["pro", "free"]',
  'plan eq ""',
  'country in ["FR", "DE"]',
  'country eq "fr" or country EQ "de"',
  'seats gt 10',
  'seats ge 10',
  'seats lt 10',
  'seats le 0',
  'seats eq 10',
  'seats ne 10',
  'age eq 0',
  'age lt 0',
  'age gt -1',
  'age le -1',
  'age ge 18 and age lt 65',
  'seats in [10, 11]',
  'score gt 3.5',
  'score le 3.5',
  'score eq 4.0',
  'score ne 3.5',
  'score in [3.5, 4.0]',
  'company.size ge 100',
  'company.size eq 99',
  'beta eq true',
  'beta ne true',
  'beta == false',
  'account.tier pr',
  'account.tier eq null',
  'account.tier ne null',
  'not (account.tier pr)',
  'NOT (plan eq "pro" and beta eq true)',
  'plan eq "pro" and beta eq true or seats gt 10',
  'plan eq "pro" or beta eq true and seats gt 10',
  'plan eq "pro" and (beta eq true or seats gt 10)',
  'appVersion ge 2.1.0',
  'appVersion lt 2.1.0',
  'appVersion eq 2.1.0',
  'appVersion ne 2.1.0',
  'key eq "user-001"',
  'targetingKey sw "USER"',
  'key eq ""',
  'anonymous eq true',
  'anonymous eq false',
  'role eq "admin"',
  'name eq "kel"',
  'name sw "KEL"',
  'name co "k"',
  'email ew "@example.com"',
]

test('every query, as GO Feature Flag matches it, for many contexts', async () => {
  const w = await world.open()
  const raw = Object.fromEntries(
    QUERIES.map((query, i) => [
      `q${i}`,
      { variations: { yes: 'matched', no: 'not matched' }, targeting: [{ query, variation: 'yes' }], defaultRule: { variation: 'no' } },
    ]),
  )
  const t = await imported(w, raw)
  // only the domain of an e-mail address is too long to spell out in every case
  expect(t.skipped.map((s) => QUERIES[Number(s.name.slice(1))])).toEqual(['email ew "@example.com"'])
  expect(judge(w, raw, t, contexts(400, 7))).toBe((QUERIES.length - 1) * 400)
})

test('the fixture file answers as GO Feature Flag does, now and inside the experimentation window', async () => {
  const w = await world.open()
  const file = Bun.YAML.parse(
    readFileSync(join(import.meta.dir, '../../fixtures/foreign/gofeatureflag/flags.goff.yaml'), 'utf8'),
  ) as Record<string, any>
  const t = await imported(w, file)
  // the past scheduled step is part of the flag the tool answers with now
  const priceFactor = {
    ...file['price-factor'],
    targeting: [...file['price-factor'].targeting, ...file['price-factor'].scheduledRollout[0].targeting],
  }
  const now = { ...file, 'price-factor': priceFactor }
  const ctxs = contexts(300, 11)
  expect(judge(w, now, t, ctxs)).toBeGreaterThan(1500)
  expect(new Set(ctxs.map((c) => served(w, 'black-friday', c)))).toEqual(new Set([undefined]))
  w.advance(-2 * 86_400_000)
  expect(judge(w, now, t, ctxs)).toBeGreaterThan(1500)
  expect(new Set(ctxs.map((c) => served(w, 'black-friday', c)))).toEqual(new Set([true]))
})

test('a rollout: the initial variation before its start, the end variation after its end (contexts with a key)', async () => {
  const w = await world.open()
  const at = (ms: number) => new Date(ms).toISOString()
  const raw = {
    ramp: {
      variations: { old: 'old', new: 'new' },
      defaultRule: {
        progressiveRollout: {
          initial: { variation: 'old', date: at(w.ms() + 3_600_000) },
          end: { variation: 'new', percentage: 100, date: at(w.ms() + 7_200_000) },
        },
      },
    },
  }
  const t = await imported(w, raw)
  const keyed = contexts(200, 3).filter((c) => typeof c.targetingKey === 'string' && c.targetingKey !== '')
  expect(judge(w, raw, t, keyed)).toBe(keyed.length)
  w.advance(7_300_000)
  expect(judge(w, raw, t, keyed)).toBe(keyed.length)
  expect(new Set(keyed.map((c) => served(w, 'ramp', c)))).toEqual(new Set(['new']))
})
