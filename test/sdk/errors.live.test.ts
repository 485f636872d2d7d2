/**
 * Errors as the live chain gives them: the live USDCs' reason strings, the Morpho
 * vault's raw revert, nonce conflicts, malformed RPC answers, amounts in USDC, and no secret anywhere on
 * the error object. Revert data is built with viem's encoders, as the live contracts return it.
 */
import { inspect } from 'node:util'
import {
  type Abi,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  encodeErrorResult,
  type Hex,
  HttpRequestError,
  NonceTooLowError,
  parseAbi,
  RawContractError,
  ResponseBodyTooLargeError,
  RpcRequestError,
  TimeoutError,
  TransactionExecutionError,
  UnknownRpcError,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import {
  routerAbi,
  usdcAbi,
  type VaultContractError,
  type VaultError,
  vaultChains,
} from '../../src/index.js'
import { describeContractError } from '../../src/sdk/errors/contract.js'
import { MalformedRpcAnswerError } from '../../src/sdk/errors/rpc.js'
import { toVaultError } from '../../src/sdk/errors/toVaultError.js'

const addresses = vaultChains.base.addresses
const reasonAbi = [
  { type: 'error', name: 'Error', inputs: [{ name: 'message', type: 'string' }] },
] as const
const reasonData = (reason: string) =>
  encodeErrorResult({ abi: reasonAbi, errorName: 'Error', args: [reason] })
/** The stand-in Morpho vault's own error: no vault ABI knows its selector. */
const morphoData = encodeErrorResult({
  abi: parseAbi(['error ConvertToAssetsDisabled()']),
  errorName: 'ConvertToAssetsDisabled',
})

/** The same revert data in the three shapes the SDK meets it in. */
const shapes: [string, (data: Hex) => unknown][] = [
  [
    'a simulation (viem decoded it against the router ABI)',
    (data) =>
      new ContractFunctionExecutionError(
        new ContractFunctionRevertedError({ abi: routerAbi, data, functionName: 'deposit' }),
        {
          abi: routerAbi,
          functionName: 'deposit',
          args: [10_000_000n, addresses.router, 0n],
          contractAddress: addresses.router,
        },
      ),
  ],
  ['a multicall read (raw revert data)', (data) => new RawContractError({ data })],
  [
    'a replayed receipt (a node error carrying the data)',
    (data) =>
      new RpcRequestError({
        body: { method: 'eth_call' },
        url: 'http://node.test',
        error: { code: 3, message: 'execution reverted', data },
      }),
  ],
]

describe("the live USDCs' reason strings", () => {
  it.each(shapes)('map to the named codes in %s', (_shape, build) => {
    const balance = toVaultError(build(reasonData('ERC20: transfer amount exceeds balance')))
    expect(balance.code).toBe('INSUFFICIENT_USDC')
    expect(balance.message).toContain('USDC balance')
    const allowance = toVaultError(build(reasonData('ERC20: transfer amount exceeds allowance')))
    expect(allowance.code).toBe('INSUFFICIENT_ALLOWANCE')
    expect(allowance.message).toContain('allowance')
    expect((allowance as VaultContractError).errorName).toBe('Error')
  })

  it('describeContractError knows them too; other reasons stay CONTRACT_REVERT', () => {
    expect(describeContractError('Error', ['ERC20: transfer amount exceeds balance']).code).toBe(
      'INSUFFICIENT_USDC',
    )
    expect(describeContractError('Error', ['ERC20: transfer amount exceeds allowance']).code).toBe(
      'INSUFFICIENT_ALLOWANCE',
    )
    expect(describeContractError('Error', ['something else']).code).toBe('CONTRACT_REVERT')
  })
})

describe("the Morpho vault's raw revert", () => {
  it.each(shapes)('is MORPHO_UNREACHABLE in %s while morphoReachable is false', (_shape, build) => {
    const error = toVaultError(build(morphoData), { addresses, morphoReachable: false })
    expect(error.code).toBe('MORPHO_UNREACHABLE')
    expect(error.message).toMatch(/Morpho venue can't be valued right now/)
    expect(error.retryable).toBe(true)
    expect(error.details.selector).toBe(morphoData.slice(0, 10))
  })

  it('stays an unknown revert while Morpho answers, or when nobody said', () => {
    for (const morphoReachable of [true, undefined]) {
      const error = toVaultError(new RawContractError({ data: morphoData }), { morphoReachable })
      expect(error.code).toBe('CONTRACT_REVERT')
    }
  })

  it('a revert without data counts too; a known error keeps its own code', () => {
    const empty = toVaultError(new RawContractError({ data: '0x' }), { morphoReachable: false })
    expect(empty.code).toBe('MORPHO_UNREACHABLE')
    const stale = toVaultError(
      new RawContractError({
        data: encodeErrorResult({ abi: routerAbi, errorName: 'StaleOracle' }),
      }),
      { morphoReachable: false },
    )
    expect(stale.code).toBe('STALE_ORACLE')
    const reason = toVaultError(
      new RawContractError({ data: reasonData('ERC20: transfer amount exceeds balance') }),
      { morphoReachable: false },
    )
    expect(reason.code).toBe('INSUFFICIENT_USDC')
  })

  it("the router's own MorphoUnreachable() says the same", () => {
    const error = toVaultError(
      new RawContractError({
        data: encodeErrorResult({ abi: routerAbi, errorName: 'MorphoUnreachable' }),
      }),
    )
    expect(error.code).toBe('MORPHO_UNREACHABLE')
    expect(error.message).toMatch(/can't be valued right now/)
    expect(error.retryable).toBe(true)
  })
})

describe('amounts in messages are USDC, never base units; shares are base units and shares', () => {
  const revert = (abi: Abi, errorName: string, args: readonly unknown[], functionName?: string) =>
    toVaultError(new RawContractError({ data: encodeErrorResult({ abi, errorName, args }) }), {
      functionName,
    })

  it.each([
    [routerAbi, 'TVLCapExceeded', [600_000_000_123n, 500_000_000_000n], ['600000.000123 USDC']],
    // Shares are shown as inputs take them, base units first, with the decimal value beside them.
    [
      routerAbi,
      'InsufficientShares',
      [2_500_000n, 1_000_001n],
      ['2500000 share units (2.5 shares)', '1000001 share units (1.000001 shares)'],
    ],
    [routerAbi, 'InsufficientPermitAllowance', [1_500_000n, 2_000_000n], ['1.5 USDC', '2 USDC']],
    [routerAbi, 'UnserviceableNet', [25_000_000n, 24_999_999n], ['25 USDC', '24.999999 USDC']],
    [routerAbi, 'NoSafeRoute', [12_500_000n], ['12.5 USDC']],
    [routerAbi, 'InsufficientVaultLiquidity', [3_000_001n, 3_000_000n], ['3.000001 USDC']],
    [
      usdcAbi,
      'ERC20InsufficientBalance',
      [addresses.router, 4_000_000n, 12_500_000n],
      ['4 USDC', '12.5 USDC'],
    ],
    [
      usdcAbi,
      'ERC20InsufficientAllowance',
      [addresses.router, 0n, 12_500_000n],
      ['0 USDC', '12.5 USDC'],
    ],
  ] as const)('%#: %s', (abi, errorName, args, shown) => {
    const { message } = revert(abi as Abi, errorName, args)
    for (const text of shown) expect(message).toContain(text)
    if (errorName === 'InsufficientShares') return
    for (const arg of args)
      if (typeof arg === 'bigint' && arg > 0n) expect(message).not.toContain(String(arg))
  })

  it('SlippageExceeded is in shares for a deposit, in USDC for a withdrawal', () => {
    const args = [9_990_001n, 10_000_000n]
    const deposit = revert(routerAbi, 'SlippageExceeded', args, 'deposit').message
    // Shares in base units, as inputs take them, with the decimal value beside them.
    expect(deposit).toContain(
      'mint 9990001 share units (9.990001 shares), below the minimum of 10000000 share units (10 shares)',
    )
    const permit = revert(routerAbi, 'SlippageExceeded', args, 'depositWithPermit').message
    expect(permit).toContain('9.990001 shares')
    const withdrawal = revert(routerAbi, 'SlippageExceeded', args, 'withdraw').message
    expect(withdrawal).toContain('pay 9.990001 USDC, below the minimum of 10 USDC')
    const unknown = revert(routerAbi, 'SlippageExceeded', args).message
    expect(unknown).toContain('9.990001')
    for (const message of [withdrawal, unknown]) expect(message).not.toContain('9990001')
  })

  it('a simulation names the function itself', () => {
    const data = encodeErrorResult({
      abi: routerAbi,
      errorName: 'SlippageExceeded',
      args: [4_000_000n, 5_000_000n],
    })
    const error = toVaultError(shapes[0]?.[1](data), { addresses })
    expect(error.message).toContain('4000000 share units (4 shares)')
  })
})

describe('a nonce taken by another sender', () => {
  const send = (message: string) =>
    new TransactionExecutionError(
      new NonceTooLowError({
        cause: new RpcRequestError({
          body: { method: 'eth_sendRawTransaction' },
          url: 'http://node.test',
          error: { code: -32003, message },
        }),
      }),
      { account: privateKeyToAccount(`0x${'11'.repeat(32)}`), chain: undefined },
    )

  it.each(['nonce too low', 'replacement transaction underpriced'])(
    'is NONCE_CONFLICT, retryable, saying so (%s)',
    (nodeMessage) => {
      const error = toVaultError(send(nodeMessage), { action: 'Deposit' })
      expect(error.code).toBe('NONCE_CONFLICT')
      expect(error.category).toBe('transaction')
      expect(error.retryable).toBe(true)
      expect(error.message).toMatch(/^Deposit failed: Another sender used this account's/)
      expect(error.message).toContain('safe to retry')
    },
  )

  it('the same transaction already in the pool is not a conflict', () => {
    expect(toVaultError(send('already known')).code).not.toBe('NONCE_CONFLICT')
  })

  it.each(['already known', 'transaction already imported', 'known transaction: 0xabc'])(
    'the same transaction sent again is TRANSACTION_ALREADY_KNOWN, retryable (%s)',
    (nodeMessage) => {
      const error = toVaultError(send(nodeMessage), { action: 'Deposit' })
      expect(error.code).toBe('TRANSACTION_ALREADY_KNOWN')
      expect(error.retryable).toBe(true)
      expect(error.message).toMatch(/^Deposit failed: The node already has this exact transaction/)
    },
  )

  it('an unknown transaction is not one the node already knows', () => {
    expect(toVaultError(send('unknown transaction type')).code).not.toBe(
      'TRANSACTION_ALREADY_KNOWN',
    )
  })
})

describe('malformed RPC answers are RPC_BAD_RESPONSE and retryable', () => {
  const url = 'https://rpc.test/v2/SECRETKEY'
  it.each([
    ['a body over the size limit', new ResponseBodyTooLargeError({ maxSize: 10, size: 11 })],
    ['`0x` where a number is due', new SyntaxError('Cannot convert 0x to a BigInt')],
    [
      'an answer vaultHttp found not to be JSON-RPC',
      new UnknownRpcError(new MalformedRpcAnswerError('not JSON-RPC')),
    ],
    [
      'JSON that does not parse',
      new HttpRequestError({ url, body: {}, cause: new SyntaxError('Unexpected token') }),
    ],
  ])('%s', (_name, error) => {
    const converted = toVaultError(error)
    expect(converted.code).toBe('RPC_BAD_RESPONSE')
    expect(converted.retryable).toBe(true)
    expect(converted.category).toBe('rpc')
  })
})

describe('errors are recognised by name, whichever copy of viem threw them', () => {
  /** An error class as another viem copy (another version, or a bundle) defines it. */
  function foreign(name: string, fields: Record<string, unknown>, cause?: Error): Error {
    const error = new Error(`${name} from another viem`, cause ? { cause } : undefined)
    error.name = name
    return Object.assign(error, fields)
  }

  it('RPC failures, reverts and wallet refusals', () => {
    expect(
      toVaultError(foreign('HttpRequestError', { status: 429, url: 'https://rpc.test' })).code,
    ).toBe('RPC_RATE_LIMITED')
    expect(toVaultError(foreign('TimeoutError', { url: 'https://rpc.test' })).code).toBe(
      'RPC_TIMEOUT',
    )
    expect(toVaultError(foreign('InternalRpcError', { code: -32603 })).retryable).toBe(true)
    const stale = encodeErrorResult({ abi: routerAbi, errorName: 'StaleOracle' })
    expect(
      toVaultError(
        foreign('ContractFunctionExecutionError', {}, foreign('RawContractError', { data: stale })),
      ).code,
    ).toBe('STALE_ORACLE')
    expect(toVaultError(foreign('UserRejectedRequestError', { code: 4001 })).code).toBe(
      'USER_REJECTED',
    )
  })
})

describe('no secret anywhere on the error object, hidden properties included', () => {
  const url = 'https://user:hunter2@rpc.example.com/v2/SECRETKEY123?apikey=QUERYSECRET'
  const key = `0x${'ab'.repeat(32)}`
  const secrets = ['hunter2', 'SECRETKEY123', 'QUERYSECRET', '/v2/', 'abababab']

  it.each([
    ['an HTTP error', new HttpRequestError({ url, status: 500, body: { key }, details: url })],
    [
      'a JSON-RPC error',
      new RpcRequestError({ url, body: { key }, error: { code: -32000, message: url } }),
    ],
    ['a timeout', new TimeoutError({ url, body: { key } })],
    ['a plain error', new Error(`failed at ${url} with ${key}`)],
  ])('%s', (_name, thrown) => {
    const error: VaultError = toVaultError(thrown, { action: 'Read' })
    const shown = inspect(error, { showHidden: true, depth: 20 })
    for (const secret of secrets) expect(shown).not.toContain(secret)
    expect(Object.getOwnPropertyNames(error)).not.toContain('rawCause')
  })
})
