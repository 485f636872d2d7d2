/**
 * The default 402 body when settlement fails: the facilitator's words, or the reason when it gave
 * none; for a settlement still pending, that the buyer must not pay again yet. (The body without
 * payment is tested with the route table it belongs to, in paywallRoutes.test.ts.)
 */
import type { HTTPRequestContext, SettlementFailedResponseBody } from '@x402/core/server'
import { describe, expect, it } from 'vitest'
import { settlementFailedBody } from '../../src/plugins/paywallResponseBodies.js'

describe('settlementFailedBody', () => {
  const failure = (
    errorReason: string,
    errorMessage?: string,
  ): Parameters<SettlementFailedResponseBody>[1] => ({
    success: false,
    errorReason,
    ...(errorMessage === undefined ? {} : { errorMessage }),
    transaction: '',
    network: 'eip155:8453',
    headers: {},
  })
  const bodyOf = async (errorReason: string, errorMessage?: string) =>
    (await settlementFailedBody({} as HTTPRequestContext, failure(errorReason, errorMessage))).body

  it("gives the facilitator's words, or says which reason when it gave none", async () => {
    expect(await bodyOf('insufficient_funds', 'The payer has too little USDC')).toEqual({
      error: 'settlement_failed',
      reason: 'insufficient_funds',
      message: 'The payer has too little USDC',
    })
    // x402 copies the reason into errorMessage when the facilitator gave no words.
    expect(await bodyOf('insufficient_funds', 'insufficient_funds')).toEqual({
      error: 'settlement_failed',
      reason: 'insufficient_funds',
      message: 'The payment could not be settled (insufficient_funds).',
    })
  })

  it('tells the buyer of a pending settlement not to pay again yet', async () => {
    expect(await bodyOf('settlement_pending')).toMatchObject({
      error: 'settlement_pending',
      message: expect.stringContaining('Do not pay again'),
    })
  })
})
