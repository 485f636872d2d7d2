import { x402ResourceServer } from '@x402/core/server'
import { guardedFacilitatorClient } from './facilitatorClient.js'
import type { CheckedFacilitator } from './facilitatorOptions.js'
import type { PaywallReport } from './paywallSettlements.js'

/**
 * The paywall's x402 resource server: the seller's own as given, or one over the facilitator through
 * the guarded client, which bounds each call and reports the calls that got no usable answer.
 *
 * @param x402 - As `checkFacilitatorOptions` returned it.
 * @param report - Told of each facilitator failure (phase `facilitator`).
 * @returns The resource server; no scheme is registered yet.
 * @example
 * const resourceServer = paywallResourceServer(checked.x402, report)
 */
export function paywallResourceServer(
  x402: CheckedFacilitator,
  report: PaywallReport,
): x402ResourceServer {
  if ('resourceServer' in x402) return x402.resourceServer
  return new x402ResourceServer(
    guardedFacilitatorClient(x402.facilitator, x402.timeouts, ({ error }) =>
      report('facilitator', error),
    ),
  )
}
