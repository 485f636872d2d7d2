/**
 * The advice the MCP server adds to an error's message: said once, even when the SDK's message already
 * ends with it (a bug the 1,000-call trial found: "Try again later. Try again later.").
 */
import { describe, expect, it } from 'vitest'
import { VaultContractError } from '../../src/index.js'
import { withAdvice } from '../../src/mcp/errors.js'
import { asMorphoUnreachable } from '../../src/sdk/errors/contract.js'

describe('withAdvice', () => {
  it('says the advice once when the message already ends with it', () => {
    // As the SDK names an unknown revert while the Morpho venue does not answer.
    const unknownRevert = new VaultContractError('The contract reverted.', {
      code: 'CONTRACT_REVERT',
    })
    const error = asMorphoUnreachable(unknownRevert, 'Withdraw plan: ')
    expect(error.code).toBe('MORPHO_UNREACHABLE')
    expect(error.message).toMatch(/Try again later\.$/)
    const text = withAdvice(error)
    expect(text.match(/Try again later/g)).toHaveLength(1)
    expect(text.startsWith(error.message)).toBe(true)
  })

  it('adds the advice when the message lacks it', () => {
    const error = new VaultContractError('The vault has no safe venue to withdraw from.', {
      code: 'NO_SAFE_VAULT',
    })
    expect(withAdvice(error)).toBe('The vault has no safe venue to withdraw from. Try again later.')
  })
})
