/**
 * A server-side OpenFeature provider on `@openfeature/ofrep-core` 2.x (docs/targeting.md#flagd-format): each
 * evaluation is one OFREP call, resolved by ofrep-core's own `toResolutionDetails` and
 * `handleEvaluationError`. The published server provider (`@openfeature/ofrep-provider` 0.1.3)
 * predates value-less answers (DISABLED, no default) and reports them as errors.
 */

import type { EvaluationContext, JsonValue, Provider, ResolutionDetails } from '@openfeature/server-sdk'
import { handleEvaluationError, OFREPApi, toResolutionDetails } from 'ofrep-core-v2'

/** The provider: `baseUrl` of the daemon, `headers` with the credential. */
export class OfrepServerProvider implements Provider {
  readonly metadata = { name: 'ofrep-core-2 server provider' }
  readonly runsOn = 'server' as const
  private readonly api: OFREPApi

  constructor(options: { baseUrl: string; headers: [string, string][] }) {
    this.api = new OFREPApi({ baseUrl: options.baseUrl, headers: options.headers })
  }

  private async resolve<T extends JsonValue>(key: string, defaultValue: T, context: EvaluationContext): Promise<ResolutionDetails<T>> {
    const result = await this.api.postEvaluateFlag(key, { context } as never)
    if (result.httpStatus !== 200) return handleEvaluationError(result.value as never, defaultValue) as ResolutionDetails<T>
    return toResolutionDetails(result.value as never, defaultValue as never) as ResolutionDetails<T>
  }

  resolveBooleanEvaluation(key: string, defaultValue: boolean, context: EvaluationContext) {
    return this.resolve(key, defaultValue, context)
  }
  resolveStringEvaluation(key: string, defaultValue: string, context: EvaluationContext) {
    return this.resolve(key, defaultValue, context)
  }
  resolveNumberEvaluation(key: string, defaultValue: number, context: EvaluationContext) {
    return this.resolve(key, defaultValue, context)
  }
  resolveObjectEvaluation<T extends JsonValue>(key: string, defaultValue: T, context: EvaluationContext) {
    return this.resolve(key, defaultValue, context)
  }

  async onClose() {
    this.api.close()
  }
}
