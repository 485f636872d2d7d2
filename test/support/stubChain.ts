/**
 * A stubbed chain for tests that need a few reads and no devnet: an msw handler for one RPC URL that
 * answers `eth_chainId`, `eth_blockNumber` and `eth_call` (a contract's view functions, and Multicall3's
 * `aggregate3` and block getters, so the SDK's one-round-trip reads work) from functions a test gives
 * per contract. Every answer is encoded from the contract's real ABI with viem (`encodeFunctionResult`),
 * never hand-written hex. A call nobody stubbed reverts, and is recorded in `unanswered`, so a test can
 * say which reads it expected.
 *
 * Register the handlers on an msw server of the test (`setupServer(...chain.handlers)`).
 */
import { HttpResponse, http, type RequestHandler } from 'msw'
import {
  type Abi,
  type Address,
  decodeFunctionData,
  domainSeparator,
  encodeFunctionResult,
  type Hex,
  isAddressEqual,
  zeroAddress,
} from 'viem'
import { usdcAbi, type VaultChainName, vaultChains } from '../../src/index.js'
import { multicall3Abi } from '../../src/sdk/abis/venues.js'
import { permit2Abi } from '../../src/sdk/abis/x402.js'
import { multicall3Address, permit2Address } from '../../src/sdk/chains.js'

/** Answers one view function: its decoded arguments in, its result out; throw {@link revert} to revert. */
export type StubRead = (args: readonly unknown[]) => unknown

/** One stubbed contract: where it is, its real ABI, and the view functions it answers. */
export type StubContract = {
  address: Address
  abi: Abi
  reads: Record<string, StubRead>
}

/** Thrown by a {@link StubRead}: the call reverts (in a multicall, its `success` is false). */
export class StubRevert extends Error {
  override name = 'StubRevert'
}
export const revert = (): never => {
  throw new StubRevert('execution reverted')
}

/** One JSON-RPC request the stub received, with the functions an `eth_call` called (in order). */
export type StubRpcRequest = { method: string; calls: string[] }

export type StubChain = {
  /** The RPC URL (nothing listens on it: msw answers). */
  url: string
  /** msw handlers to register. */
  handlers: RequestHandler[]
  /** The chain's head, as Multicall3's getters and `eth_blockNumber` report it; tests may move it. */
  block: { number: bigint; timestamp: bigint }
  /** Every request received, in order. */
  readonly requests: StubRpcRequest[]
  /** The calls no stub answered (`address.function` or `address.0xselector`), in order. */
  readonly unanswered: string[]
  /** Adds or replaces a contract's stub. */
  setContract: (contract: StubContract) => void
}

/**
 * A chain stub with Multicall3 at its canonical address (and `contracts`).
 *
 * @param options - `chainId`, the contracts it answers for, and the RPC URL (default one per chain id).
 * @returns The stub: its URL, msw handlers, the head block, and what it was asked.
 * @example
 * const chain = stubChain({ chainId: 8453, contracts: [usdcStub('base')] })
 * const server = setupServer(...chain.handlers)
 */
export function stubChain(options: {
  chainId: number
  contracts?: StubContract[]
  url?: string
}): StubChain {
  const url = options.url ?? `http://rpc-${options.chainId}.stub.test/`
  const contracts = new Map<string, StubContract>()
  const requests: StubRpcRequest[] = []
  const unanswered: string[] = []
  const block = { number: 1_000n, timestamp: BigInt(Math.floor(Date.now() / 1000)) }

  const multicall3: StubContract = {
    address: multicall3Address,
    abi: multicall3Abi,
    reads: {
      getBlockNumber: () => block.number,
      getCurrentBlockTimestamp: () => block.timestamp,
      getChainId: () => BigInt(options.chainId),
    },
  }
  const setContract = (contract: StubContract) =>
    contracts.set(contract.address.toLowerCase(), contract)
  setContract(multicall3)
  for (const contract of options.contracts ?? []) setContract(contract)

  /** One call's return data, or `undefined` for a revert. */
  function call(to: Address, data: Hex, calls: string[]): Hex | undefined {
    const contract = contracts.get(to.toLowerCase())
    const selector = data.slice(0, 10)
    if (!contract) {
      calls.push(`${to}.${selector}`)
      unanswered.push(`${to}.${selector}`)
      return undefined
    }
    let decoded: { functionName: string; args?: readonly unknown[] | undefined }
    try {
      decoded = decodeFunctionData({ abi: contract.abi, data })
    } catch {
      calls.push(`${to}.${selector}`)
      unanswered.push(`${to}.${selector}`)
      return undefined
    }
    const { functionName } = decoded
    const args = decoded.args ?? []
    calls.push(functionName)
    if (functionName === 'aggregate3' && contract === multicall3) {
      const [inner] = args as [{ target: Address; allowFailure: boolean; callData: Hex }[]]
      const results = inner.map(({ target, callData }) => {
        const returnData = call(target, callData, calls)
        return { success: returnData !== undefined, returnData: returnData ?? '0x' }
      })
      return encodeFunctionResult({
        abi: multicall3Abi,
        functionName: 'aggregate3',
        result: results,
      })
    }
    const read = contract.reads[functionName]
    if (!read) {
      unanswered.push(`${to}.${functionName}`)
      return undefined
    }
    try {
      return encodeFunctionResult({
        abi: contract.abi,
        functionName,
        result: read(args),
      } as Parameters<typeof encodeFunctionResult>[0])
    } catch (error) {
      if (error instanceof StubRevert) return undefined
      throw error
    }
  }

  function answer(request: { id?: unknown; method?: unknown; params?: unknown }) {
    const method = String(request.method)
    const calls: string[] = []
    requests.push({ method, calls })
    const reply = (result: unknown) => ({ jsonrpc: '2.0', id: request.id, result })
    const failure = (code: number, message: string, data?: Hex) => ({
      jsonrpc: '2.0',
      id: request.id,
      error: { code, message, ...(data === undefined ? {} : { data }) },
    })
    switch (method) {
      case 'eth_chainId':
        return reply(`0x${options.chainId.toString(16)}`)
      case 'eth_blockNumber':
        return reply(`0x${block.number.toString(16)}`)
      case 'eth_call': {
        const [transaction] = request.params as [{ to?: Address; data?: Hex; input?: Hex }]
        const data = transaction.data ?? transaction.input ?? '0x'
        const result = call(transaction.to ?? zeroAddress, data, calls)
        return result === undefined ? failure(3, 'execution reverted', '0x') : reply(result)
      }
      default:
        unanswered.push(method)
        return failure(-32601, `the stub chain does not answer ${method}`)
    }
  }

  return {
    url,
    block,
    requests,
    unanswered,
    setContract,
    handlers: [
      http.post(url, async ({ request }) => {
        const body = (await request.json()) as unknown
        return HttpResponse.json(
          Array.isArray(body) ? body.map(answer) : answer(body as Record<string, unknown>),
        )
      }),
    ],
  }
}

/**
 * The vault's USDC on a chain, as `readX402UsdcAsset` and `getPaymentAuthorizationState` read it: on
 * Base, Circle's USDC (EIP-3009: `name` "USD Coin", `version` "2", `authorizationState`); on Base
 * Sepolia, Aave's test USDC (no EIP-3009, no `version()`, its domain in version "1"), paid through
 * Permit2. `used` holds the EIP-3009 authorisations used (`payer:nonce`, lower case).
 */
export function usdcStub(chain: VaultChainName, used = new Set<string>()): StubContract {
  const { chainId, addresses } = vaultChains[chain]
  const domain =
    chain === 'base' ? { name: 'USD Coin', version: '2' } : { name: 'USDC', version: '1' }
  const separator = domainSeparator({
    domain: { ...domain, chainId, verifyingContract: addresses.usdc },
  })
  return {
    address: addresses.usdc,
    abi: usdcAbi,
    reads: {
      name: () => domain.name,
      DOMAIN_SEPARATOR: () => separator,
      ...(chain === 'base'
        ? {
            version: () => domain.version,
            authorizationState: ([payer, nonce]) =>
              used.has(`${String(payer).toLowerCase()}:${String(nonce).toLowerCase()}`),
          }
        : {}),
    },
  }
}

/**
 * Permit2's nonce bitmap: `used` holds the Permit2 nonces used, per payer (`payer:nonce` in decimal,
 * payer lower case).
 */
export function permit2Stub(used = new Set<string>()): StubContract {
  return {
    address: permit2Address,
    abi: permit2Abi,
    reads: {
      nonceBitmap: ([owner, word]) => {
        let bitmap = 0n
        for (const entry of used) {
          const [payer, nonce] = entry.split(':') as [string, string]
          if (!isAddressEqual(payer as Address, owner as Address)) continue
          if (BigInt(nonce) >> 8n === (word as bigint)) bitmap |= 1n << (BigInt(nonce) & 255n)
        }
        return bitmap
      },
    },
  }
}
