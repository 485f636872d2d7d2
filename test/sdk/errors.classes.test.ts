/**
 * One error family: every error class an entry point exports extends `VaultError`, is built with one
 * options-object constructor, carries a code from `vaultErrorCodes`, and keeps no secret anywhere.
 */
import { inspect } from 'node:util'
import { HttpRequestError } from 'viem'
import { describe, expect, it } from 'vitest'
import * as devnetEntry from '../../src/devnet/index.js'
import * as rootEntry from '../../src/index.js'
import * as mcpEntry from '../../src/mcp/index.js'
import * as expressEntry from '../../src/plugins/express.js'
import * as honoEntry from '../../src/plugins/hono.js'

const {
  AddressMismatchError,
  PaymentFundingError,
  PaymentOutcomeError,
  PaymentPolicyError,
  UnavailableFieldError,
  VaultConfigError,
  VaultContractError,
  VaultError,
  VaultPreconditionError,
  VaultRpcError,
  VaultTransactionError,
  VaultValidationError,
  vaultErrorCodes,
} = rootEntry
const { McpConfigError, McpToolError } = mcpEntry
const { DevnetError } = devnetEntry

const entryPoints = {
  'x402-vault': rootEntry,
  'x402-vault/express': expressEntry,
  'x402-vault/hono': honoEntry,
  'x402-vault/mcp': mcpEntry,
  'x402-vault/devnet': devnetEntry,
}

/** One instance of every error class, built the documented way. */
const samples: Record<string, () => InstanceType<typeof VaultError>> = {
  VaultError: () => new VaultError('Something odd.', { code: 'UNKNOWN', category: 'internal' }),
  VaultValidationError: () =>
    new VaultValidationError('Amount must be positive.', {
      code: 'INVALID_AMOUNT',
      details: { amount: -1n },
    }),
  VaultConfigError: () =>
    new VaultConfigError('No wallet client.', { code: 'WALLET_CLIENT_REQUIRED' }),
  AddressMismatchError: () =>
    new AddressMismatchError({ field: 'usdc.decimals()', expected: '6', actual: '18' }),
  VaultPreconditionError: () =>
    new VaultPreconditionError('Deposits are paused.', { code: 'DEPOSITS_PAUSED' }),
  VaultContractError: () =>
    new VaultContractError('The yield oracle is stale.', {
      code: 'STALE_ORACLE',
      errorName: 'StaleOracle',
      contract: 'router',
    }),
  VaultTransactionError: () =>
    new VaultTransactionError('Nonce taken.', { code: 'NONCE_CONFLICT', retryable: true }),
  VaultRpcError: () =>
    new VaultRpcError('The RPC request timed out.', { code: 'RPC_TIMEOUT', retryable: true }),
  UnavailableFieldError: () =>
    new UnavailableFieldError({ field: 'optimal', reason: 'no venue is safe' }),
  McpToolError: () => new McpToolError('Give amountUsdc or shares.', { code: 'INVALID_ARGUMENT' }),
  McpConfigError: () =>
    new McpConfigError('MCP_LOG_LEVEL must be one of debug, info, warn, error.', {
      variable: 'MCP_LOG_LEVEL',
    }),
  DevnetError: () => new DevnetError('anvil was not found.', { code: 'ANVIL_NOT_FOUND' }),
  PaymentPolicyError: () =>
    new PaymentPolicyError('Payment of 5 USDC refused: above maxPerPayment (2 USDC).', {
      code: 'PAYMENT_OVER_CAP',
      details: { cap: 'maxPerPayment', amount: 5_000_000n, limit: 2_000_000n },
    }),
  PaymentFundingError: () =>
    new PaymentFundingError('Payment of 5 USDC aborted before signing.', {
      code: 'VAULT_CANNOT_DELIVER',
      details: { amount: 5_000_000n, walletBalance: 0n, reason: 'INSUFFICIENT_VAULT_LIQUIDITY' },
    }),
  PaymentOutcomeError: () =>
    new PaymentOutcomeError('Payment of 5 USDC refused before signing: already settled.', {
      code: 'PAYMENT_ALREADY_SETTLED',
      details: { earlierPayment: { method: 'eip3009', expiresAt: 1_700_000_000n } },
    }),
}

/** Every exported class that makes errors, by name, from every entry point. */
function exportedErrorClasses(): Map<string, { entry: string; value: ErrorConstructor }> {
  const found = new Map<string, { entry: string; value: ErrorConstructor }>()
  for (const [entry, exports] of Object.entries(entryPoints)) {
    for (const [name, value] of Object.entries(exports)) {
      if (typeof value === 'function' && value.prototype instanceof Error) {
        found.set(name, { entry, value: value as ErrorConstructor })
      }
    }
  }
  return found
}

describe('one error family', () => {
  it('every error class an entry point exports has a sample here', () => {
    expect([...exportedErrorClasses().keys()].sort()).toEqual(Object.keys(samples).sort())
  })

  it.each([...exportedErrorClasses()])(
    '%s extends VaultError and has a code from vaultErrorCodes',
    (name, { value }) => {
      expect(value === (VaultError as unknown) || value.prototype instanceof VaultError).toBe(true)
      const error = samples[name]?.()
      expect(error).toBeInstanceOf(value)
      expect(error).toBeInstanceOf(VaultError)
      expect(error?.name).toBe(name)
      expect(vaultErrorCodes).toContain(error?.code)
      expect(typeof error?.category).toBe('string')
      expect(typeof error?.retryable).toBe('boolean')
      expect(error?.details).toBeTypeOf('object')
      expect(error?.toJSON()).toMatchObject({ name, code: error?.code, message: error?.message })
    },
  )

  it('lists every code once', () => {
    expect(new Set(vaultErrorCodes).size).toBe(vaultErrorCodes.length)
  })
})

describe('the options-object constructor', () => {
  it('keeps the message as given, with the code, details and retryable', () => {
    const error = new VaultValidationError('Amount must be positive.', {
      code: 'INVALID_AMOUNT',
      details: { amount: -1n },
    })
    expect(error.message).toBe('Amount must be positive.')
    expect(error.code).toBe('INVALID_AMOUNT')
    expect(error.category).toBe('validation')
    expect(error.retryable).toBe(false)
    expect(error.details).toEqual({ amount: -1n })
    expect(error.toJSON()).toEqual({
      name: 'VaultValidationError',
      code: 'INVALID_AMOUNT',
      category: 'validation',
      retryable: false,
      message: 'Amount must be positive.',
      details: { amount: '-1' },
    })
    expect(new VaultConfigError('x', { code: 'CHAIN_MISMATCH' }).details).toEqual({})
  })

  it('puts class fields in details as well', () => {
    const contract = new VaultContractError('Too much.', {
      code: 'TVL_CAP_EXCEEDED',
      errorName: 'TVLCapExceeded',
      args: [2n, 1n],
      contract: 'router',
      details: { functionName: 'deposit' },
    })
    expect([contract.errorName, contract.args, contract.contract]).toEqual([
      'TVLCapExceeded',
      [2n, 1n],
      'router',
    ])
    expect(contract.details).toEqual({
      contract: 'router',
      errorName: 'TVLCapExceeded',
      args: [2n, 1n],
      functionName: 'deposit',
    })
    const rpc = new VaultRpcError('Slow down.', {
      code: 'RPC_RATE_LIMITED',
      retryable: true,
      status: 429,
      retryAfterMs: 3000,
    })
    expect([rpc.retryable, rpc.status, rpc.retryAfterMs, rpc.category]).toEqual([
      true,
      429,
      3000,
      'rpc',
    ])
    expect(rpc.details).toEqual({ status: 429, retryAfterMs: 3000 })
  })

  it('derives the message of AddressMismatchError and UnavailableFieldError from their fields', () => {
    const mismatch = new AddressMismatchError({
      field: 'chainId',
      expected: '8453',
      actual: '1',
      code: 'CHAIN_MISMATCH',
    })
    expect(mismatch.message).toBe('Address check failed for chainId: expected 8453, got 1.')
    expect([mismatch.code, mismatch.category, mismatch.field]).toEqual([
      'CHAIN_MISMATCH',
      'config',
      'chainId',
    ])
    expect(mismatch).toBeInstanceOf(VaultConfigError)
    expect(new AddressMismatchError({ field: 'f', expected: 'a', actual: 'b' }).code).toBe(
      'ADDRESS_MISMATCH',
    )
    const field = new UnavailableFieldError({
      field: 'optimal',
      reason: 'no venue is safe',
      details: { reasonCode: 'NO_SAFE_VAULT' },
    })
    expect(field.message).toBe('optimal is unavailable: no venue is safe')
    expect(field.details).toEqual({ field: 'optimal', reasonCode: 'NO_SAFE_VAULT' })
    expect([field.code, field.category]).toEqual(['FIELD_UNAVAILABLE', 'unavailable'])
  })

  it('gives the MCP and devnet errors their codes and categories', () => {
    const tool = new McpToolError('Too much.', {
      code: 'PLAN_CAP_EXCEEDED',
      details: { cap: 100n },
    })
    expect([tool.code, tool.category, tool.retryable]).toEqual([
      'PLAN_CAP_EXCEEDED',
      'validation',
      false,
    ])
    const blocked = new VaultPreconditionError('Paused.', { code: 'DEPOSITS_PAUSED' })
    const refusal = new McpToolError('Paused. Try later.', {
      code: blocked.code,
      category: blocked.category,
      cause: blocked,
    })
    expect([refusal.category, refusal.cause]).toEqual(['precondition', blocked])

    const config = new McpConfigError('VAULT_CHAIN must be base-sepolia.', {
      variable: 'VAULT_CHAIN',
    })
    expect([config.code, config.category, config.variable]).toEqual([
      'INVALID_CONFIG',
      'config',
      'VAULT_CHAIN',
    ])
    expect(config.details).toEqual({ variable: 'VAULT_CHAIN' })

    const devnet = new DevnetError('anvil exited during start-up (code 1).', {
      code: 'ANVIL_START_FAILED',
      details: { exitCode: 1, output: 'error: port in use' },
      metaMessages: ['error: port in use'],
    })
    expect(devnet.message).toBe('anvil exited during start-up (code 1).\n\nerror: port in use')
    expect(devnet.details).toEqual({ exitCode: 1, output: 'error: port in use' })
    expect([devnet.code, devnet.category, devnet.retryable]).toEqual([
      'ANVIL_START_FAILED',
      'devnet',
      false,
    ])
    expect(
      new DevnetError('The devnet could not be set up.', {
        code: 'DEPLOY_FAILED',
        metaMessages: [undefined],
      }).message,
    ).toBe('The devnet could not be set up.')
  })

  it('keeps no secret of the cause on any error, hidden properties included', () => {
    const url = 'https://user:hunter2@rpc.example.com/v2/SECRETKEY123?apikey=QUERYSECRET'
    const cause = new HttpRequestError({ url, body: { method: 'eth_call' }, details: url })
    for (const make of [
      () => new VaultConfigError('Bad.', { code: 'CHAIN_MISMATCH', cause }),
      () => new McpToolError('Bad.', { code: 'INVALID_ARGUMENT', cause }),
      () => new McpConfigError('Bad.', { variable: 'BASE_SEPOLIA_RPC_URL', cause }),
      () => new DevnetError('Bad.', { code: 'DEPLOY_FAILED', cause }),
    ]) {
      const error = make()
      expect(error.cause).toBeInstanceOf(Error)
      expect(error.cause).not.toBe(cause)
      const texts = [
        JSON.stringify(error.toJSON()),
        inspect(error, { depth: 10, showHidden: true }),
        String((error.cause as Error).message),
      ]
      for (const text of texts) {
        for (const secret of ['hunter2', 'SECRETKEY123', 'QUERYSECRET']) {
          expect(text).not.toContain(secret)
        }
      }
    }
  })
})
