import { inspect } from 'node:util'
import {
  type Abi,
  AbiDecodingDataSizeTooSmallError,
  type AbiParameter,
  BlockNotFoundError,
  ContractFunctionExecutionError,
  ContractFunctionRevertedError,
  encodeErrorResult,
  encodeFunctionData,
  HttpRequestError,
  parseAbi,
  RawContractError,
  RpcRequestError,
  TimeoutError,
  TransactionNotFoundError,
  TransactionReceiptNotFoundError,
  toFunctionSelector,
  UserRejectedRequestError,
  zeroAddress,
} from 'viem'
import { formatAbiItem } from 'viem/utils'
import { describe, expect, it } from 'vitest'
import {
  feeCollectorAbi,
  isUnavailable,
  oracleAbi,
  routerAbi,
  shareTokenAbi,
  unwrapField,
  usdcAbi,
  VaultContractError,
  type VaultError,
  VaultRpcError,
  vaultChains,
} from '../../src/index.js'
import { vaultErrorCodes } from '../../src/sdk/errors/codes.js'
import { decodeVaultError } from '../../src/sdk/errors/contract.js'
import { parseRetryAfter } from '../../src/sdk/errors/rpc.js'
import { toVaultError } from '../../src/sdk/errors/toVaultError.js'
import { unavailable } from '../../src/sdk/field.js'
import { redactSecrets, redactUrl } from '../../src/sdk/redact.js'

const sampleAddress = '0x1111111111111111111111111111111111111111'

function sampleValue(param: AbiParameter, index: number): unknown {
  if (param.type === 'address') return sampleAddress
  if (param.type === 'bool') return true
  if (param.type === 'string') return 'hello'
  if (param.type === 'bytes32') return `0x${'ab'.repeat(32)}`
  if (param.type === 'uint8') return 7
  if (param.type.startsWith('uint')) return 1_000_000n * BigInt(index + 1) + 123n
  throw new Error(`no sample for ${param.type}`)
}

const contracts: [string, Abi][] = [
  ['router', routerAbi],
  ['oracle', oracleAbi],
  ['feeCollector', feeCollectorAbi],
  ['shareToken', shareTokenAbi],
  ['usdc', usdcAbi],
]
const errorCases = contracts.flatMap(([contract, abi]) =>
  abi
    .filter((item) => item.type === 'error')
    .map((item) => {
      const args = item.inputs.map(sampleValue)
      const data = encodeErrorResult({ abi: [item], errorName: item.name, args } as never)
      return { contract, abi, name: item.name, args, data, signature: formatAbiItem(item) }
    }),
)

describe('custom errors of the ABIs', () => {
  it('covers every custom error the live router, oracle and share token declare', () => {
    const names = new Set(errorCases.map((c) => c.name))
    for (const name of [
      'NotAuthorised',
      'DepositsPausedError',
      'ZeroAmount',
      'ZeroAddress',
      'TVLCapExceeded',
      'InsufficientShares',
      'NotEmergencyMultisig',
      'WalletAlreadyAuthorised',
      'PermitExpired',
      'InsufficientPermitAllowance',
      'NoPositionToWithdraw',
      'PositionRoundsToZero',
      'PreviewMathDegenerate',
      'UnserviceableNet',
      'InvalidAmount',
      'SlippageExceeded',
      'InvalidSignature',
      'NoSafeRoute',
      'InsufficientVaultLiquidity',
      'StaleOracle',
      'MorphoUnreachable',
      'SafeERC20FailedOperation',
      'ReentrancyGuardReentrantCall',
      'NoSafeVault',
      'NonTransferable',
    ]) {
      expect(names, name).toContain(name)
    }
    expect(errorCases.length).toBeGreaterThan(60)
  })

  it.each(errorCases.map((c) => [`${c.contract}.${c.signature}`, c] as const))(
    'decodes %s with its arguments',
    (_label, c) => {
      expect(c.data.slice(0, 10)).toBe(toFunctionSelector(c.signature))
      // raw revert data, whatever contract it bubbled up from
      const decoded = decodeVaultError(c.data)
      expect(decoded?.errorName).toBe(c.name)
      expect(decoded?.args).toEqual(c.args)

      // as viem reports it from a contract call with the contract's ABI
      const viemError = new ContractFunctionExecutionError(
        new ContractFunctionRevertedError({ abi: c.abi, data: c.data, functionName: 'probe' }),
        { abi: c.abi, functionName: 'probe', contractAddress: vaultChains.base.addresses.router },
      )
      const error = toVaultError(viemError, { addresses: vaultChains.base.addresses })
      expect(error).toBeInstanceOf(VaultContractError)
      const contractError = error as VaultContractError
      expect(contractError.errorName).toBe(c.name)
      expect(contractError.args).toEqual(c.args)
      expect(contractError.category).toBe('contract')
      expect(contractError.contract).toBe('router')
      expect(vaultErrorCodes).toContain(contractError.code)
      expect(contractError.message.length).toBeGreaterThan(10)

      // as a raw revert with data no ABI decoded yet
      const raw = toVaultError(new RawContractError({ data: c.data })) as VaultContractError
      expect(raw.errorName).toBe(c.name)
      expect(raw.args).toEqual(c.args)
    },
  )

  it('maps the protocol errors to stable codes with useful messages', () => {
    const byName = (name: string, args: readonly unknown[] = []) => {
      const item = routerAbi.find((i) => i.type === 'error' && i.name === name)
      const data = encodeErrorResult({ abi: routerAbi, errorName: name, args } as never)
      expect(item).toBeDefined()
      return toVaultError(new RawContractError({ data })) as VaultContractError
    }
    expect(byName('InvalidAmount').code).toBe('BELOW_MIN_DEPOSIT')
    expect(byName('DepositsPausedError').code).toBe('DEPOSITS_PAUSED')
    const cap = byName('TVLCapExceeded', [600_000_000_000n, 500_000_000_000n])
    expect(cap.code).toBe('TVL_CAP_EXCEEDED')
    expect(cap.message).toContain('600000 USDC')
    expect(cap.message).toContain('500000 USDC')
    expect(byName('SlippageExceeded', [1n, 2n]).code).toBe('SLIPPAGE_EXCEEDED')
    expect(byName('InsufficientShares', [2_000_000n, 1_000_000n]).message).toContain(
      '1000000 share units (1 shares)',
    )
    expect(byName('UnserviceableNet', [5n, 4n]).code).toBe('UNSERVICEABLE_AMOUNT')
    expect(byName('NotAuthorised').code).toBe('NOT_AUTHORISED')
  })

  it('decodes revert data carried by a node error (eth_call "execution reverted")', () => {
    const data = encodeErrorResult({ abi: routerAbi, errorName: 'StaleOracle' })
    const error = toVaultError(
      new RpcRequestError({
        body: { method: 'eth_call' },
        url: 'http://x.test',
        error: { code: 3, message: 'execution reverted', data },
      }),
    ) as VaultContractError
    expect(error.code).toBe('STALE_ORACLE')
    expect(error.errorName).toBe('StaleOracle')
  })

  it('reports an unknown selector, a reason string and a panic', () => {
    const unknown = toVaultError(
      new RawContractError({ data: '0xdeadbeef00' }),
    ) as VaultContractError
    expect(unknown.code).toBe('CONTRACT_REVERT')
    expect(unknown.details.selector).toBe('0xdeadbeef')

    const abi = parseAbi(['function probe()'])
    const reasonData = encodeErrorResult({
      abi: [{ type: 'error', name: 'Error', inputs: [{ name: 'message', type: 'string' }] }],
      errorName: 'Error',
      args: ['some other reason'],
    })
    const reason = toVaultError(
      new ContractFunctionRevertedError({ abi, data: reasonData, functionName: 'probe' }),
    ) as VaultContractError
    expect(reason.code).toBe('CONTRACT_REVERT')
    expect(reason.errorName).toBe('Error')
    expect(reason.message).toContain('some other reason')

    const panicData = encodeErrorResult({
      abi: [{ type: 'error', name: 'Panic', inputs: [{ name: 'code', type: 'uint256' }] }],
      errorName: 'Panic',
      args: [0x11n],
    })
    const panic = toVaultError(
      new ContractFunctionRevertedError({ abi, data: panicData, functionName: 'probe' }),
    ) as VaultContractError
    expect(panic.code).toBe('CONTRACT_PANIC')
    expect(panic.errorName).toBe('Panic')
  })
})

describe('RPC errors', () => {
  const url = 'https://user:hunter2@rpc.example.com/v2/SECRETKEY123?apikey=QUERYSECRET'
  const body = { method: 'eth_call', params: [] }
  const secrets = ['hunter2', 'SECRETKEY123', 'QUERYSECRET', '/v2/']

  function expectNoSecret(error: VaultError) {
    const texts = [
      error.message,
      JSON.stringify(error.toJSON()),
      String((error.cause as Error | undefined)?.message ?? ''),
      inspect(error, { depth: 10 }),
    ]
    for (const text of texts) for (const secret of secrets) expect(text).not.toContain(secret)
  }

  it.each([
    [429, 'RPC_RATE_LIMITED', true],
    [500, 'RPC_HTTP_ERROR', true],
    [502, 'RPC_HTTP_ERROR', true],
    [503, 'RPC_HTTP_ERROR', true],
    [504, 'RPC_TIMEOUT', true],
    [408, 'RPC_TIMEOUT', true],
    [401, 'RPC_UNAUTHORIZED', false],
    [403, 'RPC_UNAUTHORIZED', false],
    [404, 'RPC_UNAUTHORIZED', false], // a wrong URL path or key, as providers answer it
    [400, 'RPC_HTTP_ERROR', false],
  ] as const)(
    'HTTP %i → %s (retryable %s), no secret in the message',
    (status, code, retryable) => {
      const error = toVaultError(
        new HttpRequestError({
          url,
          status,
          body,
          headers: new Headers({ 'Retry-After': '3' }),
          details: url,
        }),
      )
      expect(error).toBeInstanceOf(VaultRpcError)
      expect(error.code).toBe(code)
      expect(error.retryable).toBe(retryable)
      expect(error.category).toBe('rpc')
      expect(error.message).toContain('https://rpc.example.com')
      expectNoSecret(error)
      if (status === 429) expect((error as VaultRpcError).retryAfterMs).toBe(3000)
    },
  )

  it('timeouts, network failures and malformed answers are retryable', () => {
    const timeout = toVaultError(new TimeoutError({ body, url }))
    expect([timeout.code, timeout.retryable]).toEqual(['RPC_TIMEOUT', true])
    expectNoSecret(timeout)

    const malformed = toVaultError(
      new HttpRequestError({ url, body, cause: new SyntaxError('Unexpected token <') }),
    )
    expect([malformed.code, malformed.retryable]).toEqual(['RPC_BAD_RESPONSE', true])

    const down = toVaultError(
      new HttpRequestError({ url, body, cause: new TypeError('fetch failed') }),
    )
    expect([down.code, down.retryable]).toEqual(['RPC_UNREACHABLE', true])
    expectNoSecret(down)
  })

  it('JSON-RPC rate limits are retryable; other JSON-RPC errors are not', () => {
    const limited = toVaultError(
      new RpcRequestError({ body, url, error: { code: -32005, message: 'limit' } }),
    )
    expect([limited.code, limited.retryable]).toEqual(['RPC_RATE_LIMITED', true])
    const invalid = toVaultError(
      new RpcRequestError({ body, url, error: { code: -32602, message: 'bad params' } }),
    )
    expect([invalid.code, invalid.retryable]).toEqual(['RPC_ERROR', false])
    expectNoSecret(invalid)
  })

  // viem reads a JSON-RPC -32603 as a revert whose reason is the node's message, even in an HTTP 500.
  it('an HTTP 500 whose JSON-RPC body says -32603 is the RPC failing, not a revert; real revert data still decodes', () => {
    const abi = parseAbi(['function totalSupply() view returns (uint256)'])
    const answered = (status: number, data?: `0x${string}`) =>
      new ContractFunctionExecutionError(
        new ContractFunctionRevertedError({
          abi,
          functionName: 'totalSupply',
          ...(data ? { data } : { message: `upstream failed for ${url}` }),
          cause: new RpcRequestError({
            body,
            url,
            status,
            error: {
              code: -32603,
              message: `upstream failed for ${url}`,
              ...(data ? { data } : {}),
            },
          }),
        }),
        { abi, functionName: 'totalSupply', contractAddress: zeroAddress },
      )
    const failed = toVaultError(answered(500), { action: 'Status read' })
    expect([failed.code, failed.category, failed.retryable]).toEqual([
      'RPC_HTTP_ERROR',
      'rpc',
      true,
    ])
    expect(failed.message).toBe(
      'Status read failed: The RPC answered HTTP 500 (https://rpc.example.com).',
    )
    expectNoSecret(failed)
    const reason = encodeErrorResult({
      abi: parseAbi(['error Error(string)']),
      errorName: 'Error',
      args: ['paused'],
    })
    expect(toVaultError(answered(500, reason)).category).toBe('contract')
  })

  it('a call’s answer that does not decode as its return values is a malformed answer (retryable)', () => {
    const abi = parseAbi(['function totalSupply() view returns (uint256)'])
    const error = toVaultError(
      new ContractFunctionExecutionError(
        new AbiDecodingDataSizeTooSmallError({
          data: '0x00',
          params: [{ type: 'uint256' }],
          size: 1,
        }),
        { abi, functionName: 'totalSupply', contractAddress: zeroAddress },
      ),
      { action: 'Share balance read' },
    )
    expect([error.code, error.category, error.retryable]).toEqual(['RPC_BAD_RESPONSE', 'rpc', true])
    expect(error.message).toMatch(
      /^Share balance read failed: The RPC's answer to the call to totalSupply\(\) does not decode/,
    )
  })

  // A node behind a load balancer answers null for what another node has already seen: it passes.
  it('a receipt, a transaction or a block the RPC does not have yet: retryable, with the hash or number', () => {
    const hash = `0x${'ab'.repeat(32)}` as const
    const receipt = toVaultError(new TransactionReceiptNotFoundError({ hash }), {
      action: 'Deposit (waiting for the receipt)',
    })
    expect(receipt).toBeInstanceOf(VaultRpcError)
    expect([receipt.code, receipt.category, receipt.retryable]).toEqual([
      'RECEIPT_NOT_FOUND',
      'rpc',
      true,
    ])
    expect(receipt.details).toEqual({ txHash: hash })
    expect(receipt.message).toMatch(
      new RegExp(
        `^Deposit \\(waiting for the receipt\\) failed: The RPC has no receipt for transaction ${hash} yet`,
      ),
    )
    const transaction = toVaultError(new TransactionNotFoundError({ hash }))
    expect([transaction.code, transaction.retryable, transaction.details]).toEqual([
      'TRANSACTION_NOT_FOUND',
      true,
      { txHash: hash },
    ])
    const block = toVaultError(new BlockNotFoundError({ blockNumber: 1234n }))
    expect([block.code, block.retryable, block.details]).toEqual([
      'BLOCK_NOT_FOUND',
      true,
      { blockNumber: 1234n },
    ])
    // Found by name in the cause chain: from any copy of viem, wrapped or not.
    const wrapped = new Error('wait failed', {
      cause: Object.assign(
        new Error(`Transaction receipt with hash "${hash}" could not be found.`),
        {
          name: 'TransactionReceiptNotFoundError',
        },
      ),
    })
    expect(toVaultError(wrapped).code).toBe('RECEIPT_NOT_FOUND')
  })

  it('wallet refusals are transaction errors', () => {
    const refused = toVaultError(new UserRejectedRequestError(new Error('no')))
    expect(refused.code).toBe('USER_REJECTED')
    expect(refused.category).toBe('transaction')
  })

  it('never leaks a private key from an unknown error', () => {
    const key = `0x${'ef'.repeat(32)}`
    const error = toVaultError(
      new Error(`boom at https://rpc.example.com/SECRETKEY123 with ${key}`),
    )
    expect(error.code).toBe('UNKNOWN')
    expect(error.message).not.toContain('SECRETKEY123')
    expect(error.message).not.toContain('efefefef')
    expect(redactSecrets(`key ${key}`, { hideHex32: true })).not.toContain('efef')
  })

  it('parses Retry-After in seconds and as an HTTP date', () => {
    expect(parseRetryAfter('2')).toBe(2000)
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000)
    expect(parseRetryAfter('soon')).toBeUndefined()
    expect(parseRetryAfter(null)).toBeUndefined()
  })

  it('redacts URLs to their origin', () => {
    expect(redactUrl(url)).toBe('https://rpc.example.com')
    expect(redactSecrets(`POST ${url} failed`)).toBe('POST https://rpc.example.com failed')
    expect(redactSecrets('ws://a:b@node.local:8546/k?x=1')).toBe('ws://node.local:8546')
  })
})

describe('fields', () => {
  it('wraps a failure as Unavailable and unwraps values', () => {
    const data = encodeErrorResult({ abi: oracleAbi, errorName: 'NoSafeVault' })
    const field = unavailable(new RawContractError({ data }))
    expect(isUnavailable(field)).toBe(true)
    expect(field.code).toBe('NO_SAFE_VAULT')
    expect(field.errorName).toBe('NoSafeVault')
    expect(unwrapField(5n)).toBe(5n)
    expect(() => unwrapField(field, 'optimal')).toThrowError(/optimal is unavailable/)
    expect(isUnavailable(0n)).toBe(false)
    expect(isUnavailable(null)).toBe(false)
  })

  it('encodes calls against the ABIs (sanity)', () => {
    expect(encodeFunctionData({ abi: routerAbi, functionName: 'initialize' })).toBe('0x8129fc1c')
  })
})
