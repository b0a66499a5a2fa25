/** A command-line mistake by the user: printed as `error: …` with exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** When set, the usage of this command chain is printed after the error line. */
    readonly usageOf?: readonly unknown[],
  ) {
    super(message)
    this.name = 'UsageError'
  }
}
