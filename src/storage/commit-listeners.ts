/**
 * The listeners of a store's durable commits (`Store.onCommit`): called in commit order; one that
 * throws is reported and the others still hear the commit.
 */

import type { Commit } from './store.ts'

export class CommitListeners {
  private readonly listeners = new Set<(commit: Commit) => void>()

  /** Subscribes; returns the unsubscribe function. */
  add(listener: (commit: Commit) => void): () => void {
    this.listeners.add(listener)
    return () => this.listeners.delete(listener)
  }

  /** Tells every listener of `commit`. */
  publish(commit: Commit): void {
    for (const listener of this.listeners) {
      try {
        listener(commit)
      } catch (err) {
        console.error('flagd: a commit listener failed:', err)
      }
    }
  }
}
