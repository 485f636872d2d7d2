/**
 * The schemes a paywall sells with: a route's `scheme` read in its order (`exact` unless it says
 * otherwise), anything else refused with the known schemes named, and x402's server scheme registered
 * once for each scheme the routes use, never over one the seller's resource server already has.
 */
import { x402ResourceServer } from '@x402/core/server'
import { BatchSettlementEvmScheme, InMemoryChannelStorage } from '@x402/evm/batch-settlement/server'
import { ExactEvmScheme } from '@x402/evm/exact/server'
import { UptoEvmScheme } from '@x402/evm/upto/server'
import { describe, expect, it } from 'vitest'
import { VaultValidationError } from '../../src/index.js'
import type { CheckedBatchSettlement, PaywallRoute } from '../../src/plugins/paywallOptions.js'
import {
  paywallSchemes,
  registerPaywallSchemes,
  routeSchemes,
  type SchemeServerSettings,
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
    expect(routeSchemes('GET /a', route(['batch-settlement', 'exact']))).toEqual([
      'batch-settlement',
      'exact',
    ])
  })

  it('refuses an unknown scheme, an empty list and a scheme named twice, naming the field', () => {
    const unknown = refusal(() => routeSchemes('GET /a', route('auth-capture')))
    expect(unknown.code).toBe('INVALID_ARGUMENT')
    expect(unknown.message).toBe(
      `routes["GET /a"].scheme must be 'exact', 'upto' or 'batch-settlement', or a list of them (not "auth-capture").`,
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
  const payTo = '0x00000000000000000000000000000000000000aa'
  const settings: SchemeServerSettings = { payTo, batchSettlement: undefined }
  const batchSettlement = (storage: CheckedBatchSettlement['storage']): CheckedBatchSettlement => ({
    storage,
    receiverAuthorizer: undefined,
    claimIntervalMs: 60_000,
    settleIntervalMs: 300_000,
    refundIdleAfterMs: false,
    closeTimeoutMs: 30_000,
  })

  it('registers each scheme the routes use on the network, and no other', () => {
    const exactOnly = new x402ResourceServer()
    registerPaywallSchemes(exactOnly, network, ['exact'], settings)
    expect(exactOnly.getRegisteredScheme(network, 'exact')).toBeInstanceOf(ExactEvmScheme)
    expect(exactOnly.hasRegisteredScheme(network, 'upto')).toBe(false)

    const both = new x402ResourceServer()
    registerPaywallSchemes(both, network, ['upto', 'exact'], settings)
    expect(both.getRegisteredScheme(network, 'exact')).toBeInstanceOf(ExactEvmScheme)
    expect(both.getRegisteredScheme(network, 'upto')).toBeInstanceOf(UptoEvmScheme)
    expect(both.hasRegisteredScheme('eip155:84532', 'upto')).toBe(false)
    expect(both.hasRegisteredScheme(network, 'batch-settlement')).toBe(false)
  })

  it("registers batch-settlement for payTo over the seller's channel storage, or x402's in-memory one", () => {
    const storage = new InMemoryChannelStorage()
    const shared = new x402ResourceServer()
    registerPaywallSchemes(shared, network, ['batch-settlement'], {
      payTo,
      batchSettlement: batchSettlement(storage),
    })
    const scheme = shared.getRegisteredScheme(network, 'batch-settlement')
    expect(scheme).toBeInstanceOf(BatchSettlementEvmScheme)
    expect((scheme as BatchSettlementEvmScheme).getReceiverAddress()).toBe(payTo)
    expect((scheme as BatchSettlementEvmScheme).getStorage()).toBe(storage)
    expect(shared.hasRegisteredScheme(network, 'exact')).toBe(false)

    const inMemory = new x402ResourceServer()
    registerPaywallSchemes(inMemory, network, ['batch-settlement'], {
      payTo,
      batchSettlement: batchSettlement(undefined),
    })
    const defaultScheme = inMemory.getRegisteredScheme(network, 'batch-settlement')
    expect((defaultScheme as BatchSettlementEvmScheme).getStorage()).toBeInstanceOf(
      InMemoryChannelStorage,
    )
  })

  it("keeps a scheme the seller's resource server already has", () => {
    const server = new x402ResourceServer()
    const own = new ExactEvmScheme()
    server.register(network, own)
    registerPaywallSchemes(server, network, ['exact', 'upto'], settings)
    expect(server.getRegisteredScheme(network, 'exact')).toBe(own)
    expect(server.getRegisteredScheme(network, 'upto')).toBeInstanceOf(UptoEvmScheme)
  })
})
