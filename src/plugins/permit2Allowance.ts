import type { x402HTTPResourceServer } from '@x402/core/server'
import { type PaymentAuthorization, VaultPreconditionError } from '../index.js'
import { permit2Address } from '../sdk/shared.js'
import { type PaywallReport, paymentAuthorizationInHeader } from './paywallSettlements.js'

/** How many buyers' addresses are remembered so that each is reported once (the oldest are forgotten). */
const maxRememberedBuyers = 10_000

/**
 * Makes x402's `412 {}` for a buyer without a Permit2 allowance say what to do, and tells the seller
 * once per buyer. x402 answers a payment its facilitator refused as `permit2_allowance_required` with
 * status 412, an empty body and only the `PAYMENT-REQUIRED` header saying why; a buyer set up as x402's
 * docs show (a signer that cannot read the chain) never learns that it must approve Permit2 once, or
 * use a signer that can read the chain so that its client signs x402's gas-sponsored permit.
 *
 * @param httpServer - The paywall's x402 HTTP server; its `processHTTPRequest` is wrapped.
 * @param options - Whether the routes offer x402's EIP-2612 gas sponsoring, and how to tell the seller.
 */
export function explainPermit2AllowanceRequired(
  httpServer: x402HTTPResourceServer,
  options: { gasSponsoring: boolean; report: PaywallReport },
): void {
  const reported = new Set<string>()
  const process = httpServer.processHTTPRequest.bind(httpServer)
  httpServer.processHTTPRequest = async (context, paywallConfig) => {
    const result = await process(context, paywallConfig)
    // x402 answers 412 for `permit2_allowance_required` alone.
    if (
      result.type !== 'payment-error' ||
      result.response.status !== 412 ||
      result.response.isHtml
    ) {
      return result
    }
    const authorization = paymentAuthorizationInHeader(context.paymentHeader)
    if (authorization && !reported.has(authorization.payer)) {
      reported.add(authorization.payer)
      if (reported.size > maxRememberedBuyers) {
        reported.delete(reported.values().next().value as string)
      }
      options.report(
        'payment',
        new VaultPreconditionError(
          `A buyer, ${authorization.payer}, could not pay: it has not approved Permit2 for the USDC at ${authorization.asset}${options.gasSponsoring ? ', and its x402 client did not sign the gas-sponsored permit this paywall offers (its signer cannot read the chain)' : ''}. It was answered 412 with what to do; nothing was transferred. (Reported once per buyer.)`,
          {
            code: 'PERMIT2_ALLOWANCE_REQUIRED',
            details: { payer: authorization.payer, asset: authorization.asset },
          },
        ),
      )
    }
    return {
      ...result,
      response: { ...result.response, body: explanation(authorization, options.gasSponsoring) },
    }
  }
}

/** The 412 body: what is missing, and the two ways to pay. */
function explanation(authorization: PaymentAuthorization | undefined, gasSponsoring: boolean) {
  const wallet = authorization ? `The wallet ${authorization.payer}` : 'The paying wallet'
  const asset = authorization ? `the token at ${authorization.asset}` : 'the token'
  const ways = [
    `approve Permit2 once for ${asset} (one transaction of about 46,500 gas; \`createPermit2ApprovalTx(asset)\` from @x402/evm builds it), after which payments need nothing more`,
    ...(gasSponsoring
      ? [
          "or build the x402 client's scheme with a signer that can read the chain (`new ExactEvmScheme(toClientEvmSigner(account, publicClient))`), so that it signs an EIP-2612 permit for Permit2 with the payment and the facilitator submits both (gas sponsoring, which this seller offers): no transaction of your own",
        ]
      : []),
  ]
  return {
    error: 'permit2_allowance_required',
    message: `${wallet} has not approved Permit2 (${permit2Address}) to spend ${asset}, and x402 pays it through Permit2: the payment was not taken, nothing was transferred. To pay, ${ways.join('; ')}. Then pay again.`,
    ...(authorization
      ? {
          payment: {
            network: authorization.network,
            asset: authorization.asset,
            payer: authorization.payer,
            payTo: authorization.payTo,
            amount: authorization.amount.toString(),
            permit2: permit2Address,
          },
        }
      : {}),
  }
}
