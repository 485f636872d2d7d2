import { type FacilitatorClient, x402ResourceServer } from '@x402/core/server'
import { guardedFacilitatorClient } from './facilitatorClient.js'
import type { CheckedFacilitator } from './facilitatorOptions.js'
import type { PaywallReport } from './paywallSettlements.js'

/** The paywall's x402 resource server, and the facilitator client it was built with. */
export type PaywallResourceServer = {
  resourceServer: x402ResourceServer
  /**
   * The guarded client over the facilitator, which `batch-settlement`'s channel manager also sends its
   * claims to; `undefined` for the seller's own resource server.
   */
  facilitatorClient: FacilitatorClient | undefined
}

/**
 * The paywall's x402 resource server: the seller's own as given, or one over the facilitator through
 * the guarded client, which bounds each call and reports the calls that got no usable answer.
 *
 * @param x402 - As `checkFacilitatorOptions` returned it.
 * @param report - Told of each facilitator failure (phase `facilitator`).
 * @returns The resource server (no scheme is registered yet) and its facilitator client.
 * @example
 * const { resourceServer, facilitatorClient } = paywallResourceServer(checked.x402, report)
 */
export function paywallResourceServer(
  x402: CheckedFacilitator,
  report: PaywallReport,
): PaywallResourceServer {
  if ('resourceServer' in x402) {
    return { resourceServer: x402.resourceServer, facilitatorClient: undefined }
  }
  const facilitatorClient = guardedFacilitatorClient(x402.facilitator, x402.timeouts, ({ error }) =>
    report('facilitator', error),
  )
  return { resourceServer: new x402ResourceServer(facilitatorClient), facilitatorClient }
}
