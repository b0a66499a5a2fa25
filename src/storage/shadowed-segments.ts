/**
 * Repair of a defect of earlier versions: concurrent segment writes could store two rows of one
 * name (see `Snapshot.shadowedSegments`). Loading keeps the newest by name; this deletes the others
 * in one maintenance commit (not audited: no row anyone could see changes), so a later delete by name cannot bring an older row back after a restart.
 */

import { systemPrincipal } from '../domain/principal.ts'
import type { Store } from './store.ts'

/** Deletes every shadowed segment row; returns how many went (0: nothing to do, nothing written). */
export async function repairShadowedSegments(store: Store, log: (line: string) => void): Promise<number> {
  const shadowed = store.committed().shadowedSegments()
  if (shadowed.length === 0 || !store.writable) return 0
  await store.transact({ principal: systemPrincipal('maintenance'), source: 'maintenance', requestId: 'repair-segments' }, (tx) => {
    for (const segment of tx.read.shadowedSegments()) tx.delete('segments', segment.id)
  })
  const names = [...new Set(shadowed.map((s) => s.name))].sort()
  log(
    `removed ${shadowed.length} older duplicate row(s) of segment(s) ${names.join(', ')} that an earlier flagd stored; the newest of each name is kept`,
  )
  return shadowed.length
}
