/**
 * The schemes a paywall sells with: a route's `scheme` read in its order (`exact` unless it says
 * otherwise), anything else refused with the known schemes named, and x402's server scheme registered
 * once for each scheme the routes use, never over one the seller's resource server already has.
 */
import { x402ResourceServer } from '@x402/core/server'
import { ExactEvmScheme } from '@x402/evm/exact/server'
import { UptoEvmScheme } from '@x402/evm/upto/server'
import { describe, expect, it } from 'vitest'
import { VaultValidationError } from '../../src/index.js'
import type { PaywallRoute } from '../../src/plugins/paywallOptions.js'
import {
  paywallSchemes,
  registerPaywallSchemes,
  routeSchemes,
} from '../../src/plugins/paywallSchemes.js'

const route = (scheme?: unknown): PaywallRoute =>
  ({ price: '0.01', description: 'Weather', mimeType: 'application/json', scheme }) as PaywallRoute

function refusal(call: () => unknown): VaultValidationError {
  try {
    call()
  } catch (error) {
    expect(error).toBeInstanceOf(VaultValidationError)
    return error as VaultValidationError
  }
  throw new Error('expected a refusal')
}

describe('routeSchemes', () => {
  it("is ['exact'] by default, and the route's schemes in its order otherwise", () => {
    expect(routeSchemes('GET /a', route())).toEqual(['exact'])
    expect(routeSchemes('GET /a', route('upto'))).toEqual(['upto'])
    expect(routeSchemes('GET /a', route(['upto', 'exact']))).toEqual(['upto', 'exact'])
    expect(routeSchemes('GET /a', route(['exact', 'upto']))).toEqual(['exact', 'upto'])
  })

  it('refuses an unknown scheme, an empty list and a scheme named twice, naming the field', () => {
    const unknown = refusal(() => routeSchemes('GET /a', route('batch-settlement')))
    expect(unknown.code).toBe('INVALID_ARGUMENT')
    expect(unknown.message).toBe(
      `routes["GET /a"].scheme must be 'exact' or 'upto', or a list of them (not "batch-settlement").`,
    )
    expect(unknown.details).toEqual({ field: 'routes["GET /a"].scheme', known: paywallSchemes })

    const notAString = refusal(() => routeSchemes('GET /a', route([7])))
    expect(notAString.message).toMatch(/\(not 7\)\.$/)

    const empty = refusal(() => routeSchemes('GET /a', route([])))
    expect(empty.message).toMatch(/a list of them \(the list is empty\)\.$/)

    const twice = refusal(() => routeSchemes('GET /a', route(['upto', 'upto'])))
    expect(twice.message).toBe('routes["GET /a"].scheme names a scheme twice.')
    expect(twice.details).toEqual({ field: 'routes["GET /a"].scheme' })
  })
})

describe('registerPaywallSchemes', () => {
  const network = 'eip155:8453'

  it('registers each scheme the routes use on the network, and no other', () => {
    const exactOnly = new x402ResourceServer()
    registerPaywallSchemes(exactOnly, network, ['exact'])
    expect(exactOnly.getRegisteredScheme(network, 'exact')).toBeInstanceOf(ExactEvmScheme)
    expect(exactOnly.hasRegisteredScheme(network, 'upto')).toBe(false)

    const both = new x402ResourceServer()
    registerPaywallSchemes(both, network, ['upto', 'exact'])
    expect(both.getRegisteredScheme(network, 'exact')).toBeInstanceOf(ExactEvmScheme)
    expect(both.getRegisteredScheme(network, 'upto')).toBeInstanceOf(UptoEvmScheme)
    expect(both.hasRegisteredScheme('eip155:84532', 'upto')).toBe(false)
  })

  it("keeps a scheme the seller's resource server already has", () => {
    const server = new x402ResourceServer()
    const own = new ExactEvmScheme()
    server.register(network, own)
    registerPaywallSchemes(server, network, ['exact', 'upto'])
    expect(server.getRegisteredScheme(network, 'exact')).toBe(own)
    expect(server.getRegisteredScheme(network, 'upto')).toBeInstanceOf(UptoEvmScheme)
  })
})
