import {
  type RouteConfig,
  x402HTTPResourceServer,
  type x402ResourceServer,
} from '@x402/core/server'
import { VaultConfigError, type VaultNetwork, VaultValidationError } from '../index.js'
import { redactSecrets } from '../sdk/shared.js'
import type { PaywallScheme } from './paywallSchemes.js'

/**
 * Builds and initialises the x402 HTTP resource server for the routes, turning x402's start-up failures
 * into errors that say what to fix. Initialising here (the facilitator's `supported` call) is what keeps
 * x402's background start-up from calling `process.exit` on them.
 *
 * @param resourceServer - The paywall's resource server, its schemes registered.
 * @param routes - The route table (`paywallRoutes`).
 * @param network - The vault's network, for the errors.
 * @param schemes - The schemes the routes sell with, for the errors.
 * @returns The initialised HTTP server.
 * @throws {VaultValidationError} `INVALID_ARGUMENT` when x402 refuses the routes; {VaultConfigError}
 *   `FACILITATOR_UNSUPPORTED` when the facilitator does not settle a scheme on the network,
 *   `FACILITATOR_UNREACHABLE` when it cannot be reached or refuses the request.
 * @example
 * const httpServer = await initializePaywallHttpServer(resourceServer, routes, vault.network, ['exact'])
 */
export async function initializePaywallHttpServer(
  resourceServer: x402ResourceServer,
  routes: Record<string, RouteConfig>,
  network: VaultNetwork,
  schemes: readonly PaywallScheme[],
): Promise<x402HTTPResourceServer> {
  let httpServer: x402HTTPResourceServer
  try {
    httpServer = new x402HTTPResourceServer(resourceServer, routes)
  } catch (error) {
    throw new VaultValidationError(`x402 refused the routes: ${messageOf(error)}`, {
      code: 'INVALID_ARGUMENT',
    })
  }
  try {
    await httpServer.initialize()
  } catch (error) {
    if ((error as Error)?.name === 'RouteConfigurationError') {
      throw new VaultConfigError(
        `The facilitator does not support the ${schemes.join(' and ')} scheme${schemes.length > 1 ? 's' : ''} on ${network}, which the routes sell with: use a facilitator that supports ${schemes.length > 1 ? 'them' : 'it'} on ${network}. (${messageOf(error)})`,
        { code: 'FACILITATOR_UNSUPPORTED', details: { network, schemes } },
      )
    }
    throw new VaultConfigError(
      `The x402 facilitator could not be reached or refused the request: ${messageOf(error)}. Check its URL and credentials.`,
      { code: 'FACILITATOR_UNREACHABLE', details: { network }, cause: error },
    )
  }
  return httpServer
}

/** An error's message and its causes' on one line, with URLs reduced to their origin. */
function messageOf(error: unknown): string {
  const parts: string[] = []
  for (let e: unknown = error; e instanceof Error && parts.length < 3; e = e.cause) {
    parts.push(e.message.replace(/\s*\n\s*/g, ' '))
  }
  const text = parts.length > 0 ? parts.join(': ') : String(error)
  return redactSecrets(text, { hideHex32: true })
}
