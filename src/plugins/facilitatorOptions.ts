import type { FacilitatorConfig, x402ResourceServer } from '@x402/core/server'
import { VaultValidationError } from '../index.js'
import { defaultFacilitatorTimeouts, type FacilitatorTimeouts } from './facilitatorClient.js'
import type { CreatePaywallOptions, PaywallFacilitator } from './paywallOptions.js'

/** Where the paywall's x402 resource server comes from, once checked. */
export type CheckedFacilitator =
  /** The seller's own resource server, kept with its facilitator clients and hooks. */
  | { resourceServer: x402ResourceServer }
  /** The facilitator to build one with: its URL and headers, and each call's timeout. */
  | {
      facilitator: Pick<FacilitatorConfig, 'url' | 'createAuthHeaders'>
      timeouts: FacilitatorTimeouts
    }

/**
 * Checks where the paywall's x402 resource server comes from: a resource server of the seller's own,
 * or a facilitator's URL, credentials (a bearer token or x402's `createAuthHeaders`) and timeouts.
 * Nothing goes over the network; the URL, which may hold a key, is never echoed.
 *
 * @param options - `createPaywall`'s `facilitator` and `resourceServer`.
 * @returns The resource server, or the facilitator's config and timeouts.
 * @throws {VaultValidationError} `INVALID_ARGUMENT`: both or neither given, a resource server that is
 *   not one, a URL that is not http(s), a bearer token with spaces, both kinds of credentials, or a
 *   timeout that is not a positive whole number of ms.
 * @example
 * const x402 = checkFacilitatorOptions({ facilitator: { url: process.env.X402_FACILITATOR_URL } })
 */
export function checkFacilitatorOptions(
  options: Pick<CreatePaywallOptions, 'facilitator' | 'resourceServer'>,
): CheckedFacilitator {
  const { facilitator, resourceServer } = options
  if (resourceServer !== undefined) {
    if (facilitator !== undefined) {
      throw new VaultValidationError(
        'Give either `facilitator` or `resourceServer`, not both: a resource server has its own facilitator clients.',
        { code: 'INVALID_ARGUMENT', details: { field: 'facilitator' } },
      )
    }
    // Structural: the caller's resource server may come from another copy of @x402/core.
    if (
      typeof resourceServer?.register !== 'function' ||
      typeof resourceServer.hasRegisteredScheme !== 'function' ||
      typeof resourceServer.onAfterSettle !== 'function' ||
      typeof resourceServer.onSettleFailure !== 'function'
    ) {
      throw new VaultValidationError(
        '`resourceServer` must be an x402ResourceServer (from @x402/core/server, @x402/express or @x402/hono).',
        { code: 'INVALID_ARGUMENT', details: { field: 'resourceServer' } },
      )
    }
    return { resourceServer }
  }
  if (typeof facilitator?.url !== 'string' || !/^https?:\/\//.test(facilitator.url)) {
    // Usually from an environment variable; its value is never echoed (a URL may hold a key).
    const unset = facilitator !== undefined && facilitator.url === undefined
    throw new VaultValidationError(
      `\`facilitator.url\` must be the http(s) URL of an x402 facilitator (or pass \`resourceServer\`)${unset ? '; it is undefined: is the variable that should hold it (such as X402_FACILITATOR_URL) set?' : '.'}`,
      { code: 'INVALID_ARGUMENT', details: { field: 'facilitator.url' } },
    )
  }
  if (facilitator.bearerToken !== undefined && facilitator.createAuthHeaders !== undefined) {
    throw new VaultValidationError(
      'Give either `facilitator.bearerToken` or `facilitator.createAuthHeaders`, not both.',
      { code: 'INVALID_ARGUMENT', details: { field: 'facilitator' } },
    )
  }
  return {
    facilitator: { url: facilitator.url, ...authHeaders(facilitator) },
    timeouts: facilitatorTimeouts(facilitator.timeoutMs),
  }
}

/** x402 wants facilitator headers keyed by path; a flat object would throw on the first request. */
function authHeaders(
  facilitator: PaywallFacilitator,
): Pick<FacilitatorConfig, 'createAuthHeaders'> {
  if (facilitator.createAuthHeaders) return { createAuthHeaders: facilitator.createAuthHeaders }
  const token = facilitator.bearerToken
  if (token === undefined) return {}
  if (typeof token !== 'string' || token === '' || /[\s]/.test(token)) {
    throw new VaultValidationError(
      '`facilitator.bearerToken` must be a non-empty token without spaces.',
      { code: 'INVALID_ARGUMENT', details: { field: 'facilitator.bearerToken' } },
    )
  }
  const headers = { Authorization: `Bearer ${token}` }
  return {
    createAuthHeaders: async () => ({ verify: headers, settle: headers, supported: headers }),
  }
}

function facilitatorTimeouts(given: PaywallFacilitator['timeoutMs']): FacilitatorTimeouts {
  const pair = typeof given === 'number' ? { verify: given, settle: given } : { ...given }
  const timeouts = {
    verify: pair.verify ?? defaultFacilitatorTimeouts.verify,
    settle: pair.settle ?? defaultFacilitatorTimeouts.settle,
  }
  for (const [name, ms] of Object.entries(timeouts)) {
    if (!Number.isSafeInteger(ms) || ms <= 0) {
      throw new VaultValidationError(
        `\`facilitator.timeoutMs\` must be a positive whole number of ms, or { verify, settle } of them (${name}: ${String(ms)}).`,
        { code: 'INVALID_ARGUMENT', details: { field: 'facilitator.timeoutMs' } },
      )
    }
  }
  return timeouts
}
