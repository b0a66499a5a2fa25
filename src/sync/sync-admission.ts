/**
 * Who may sync (docs/openfeature.md#in-process): a caller is the API token it presents as metadata
 * `authorization: Bearer <token>` or in the selector as `token=<token>`; over TCP a caller without
 * one is refused unless `sync.anonymous`, on the unix socket none is needed. Streams are counted
 * against the caller's token.
 */

import { type Metadata, status } from '@grpc/grpc-js'
import { AppError } from '../domain/errors.ts'
import { type GrpcStatus, grpcStatusOf } from '../http/error-handler.ts'
import type { FlagSyncService, SyncCaller } from '../services/flag-sync-service.ts'
import { failure, secretOf } from './secret-of.ts'
import type { FlagsRequest } from './sync-protocol.ts'

/** The sync protocol's decisions about callers. */
export interface SyncAdmission {
  /** The caller of a request, refused (as a gRPC error) when its credential is bad or missing where one is needed. */
  admit(metadata: Metadata, request: FlagsRequest, anonymousAllowed: boolean): Promise<SyncCaller>
  /** What a caller's streams are counted against in the budget (its token; `undefined` for anonymous callers). */
  budgetKey(caller: SyncCaller): string | undefined
  /** The gRPC error of a caller refused a stream because the budget is full. */
  tooManyStreams(caller: SyncCaller): GrpcStatus
  /** The refusal of a new stream whose document finds no room among the documents in flight. */
  noRoom(): GrpcStatus
}

/** Creates the admission over the sync service; `logError` hears of internal errors (bugs). */
export function createSyncAdmission(service: Pick<FlagSyncService, 'callerOf'>, logError: (err: unknown) => void): SyncAdmission {
  return {
    async admit(metadata, request, anonymousAllowed) {
      let caller: SyncCaller
      try {
        caller = await service.callerOf(secretOf(metadata, request))
      } catch (err) {
        throw grpcStatusOf(err, logError)
      }
      if (caller.kind === 'anonymous' && !anonymousAllowed)
        throw failure(
          status.UNAUTHENTICATED,
          'an API token is needed: authorization metadata "Bearer <token>", or the selector "token=<token>"',
        )
      return caller
    },

    budgetKey: (caller) => (caller.kind === 'token' ? caller.principal.tokenId : undefined),

    tooManyStreams(caller) {
      const err = new AppError(
        'TOO_MANY_REQUESTS',
        `too many open sync streams${caller.kind === 'token' ? ' for this token' : ''}; close some first`,
      )
      return grpcStatusOf(err, logError)
    },
    noRoom() {
      const err = new AppError('TOO_MANY_REQUESTS', 'the sync port holds as many unread documents as it may; retry later')
      return grpcStatusOf(err, logError)
    },
  }
}
