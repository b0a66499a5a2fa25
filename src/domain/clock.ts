/**
 * The clock every component reads the time from. There is exactly one per process: `createApp` makes
 * it (the system's, or the one a test injects) and hands it to storage, services and transports, so a
 * test that pins the date pins it everywhere (docs/development.md#time). Elapsed time (how long a
 * request took) is measured with `performance.now()`, which no date depends on.
 */
export type Clock = () => Date
