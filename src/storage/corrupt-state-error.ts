/** The error that stops start-up on state it cannot trust (docs/operations.md#the-daemon-on-disk-and-at-run-time). */

/** The state file could not be used; the message says what to do. */
export class CorruptStateError extends Error {
  constructor(path: string, problem: string, what = 'state file') {
    super(
      `${what} ${path} cannot be used: ${problem}. flagd will not start rather than risk losing data; ` +
        'restore it from a backup or move it away to start empty',
    )
    this.name = 'CorruptStateError'
  }
}
