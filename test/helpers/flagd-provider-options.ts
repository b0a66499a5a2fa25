/**
 * What the tests give OpenFeature's flagd provider. Its default deadline (0.5 s to connect, and for
 * each RPC evaluation) is a production setting for an idle network; on a test machine whose two cores
 * run the whole suite a connection took longer, and the provider gave up with "Failed to connect
 * before the deadline". A longer deadline asserts nothing about time: it only waits.
 */

/** The flagd provider's `deadlineMs` in tests. */
export const PROVIDER_DEADLINE_MS = 10_000
