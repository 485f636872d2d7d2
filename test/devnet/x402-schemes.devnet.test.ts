/**
 * x402's `upto` and `batch-settlement` schemes on the devnet, end to end with x402's stock packages only: its
 * resource server and Hono middleware with its own server schemes, its HTTP facilitator client talking to the devnet's
 * facilitator, and its stock buyers with their spend controls on (on Base the USDC is Circle's, x402's default asset;
 * on Base Sepolia Aave's test USDC, which a buyer opts in to). The mechanisms differ by chain: a batch deposit is an
 * EIP-3009 authorization through x402's EIP-3009 collector on Base, a Permit2 signature through its Permit2 collector
 * on Base Sepolia. Balances are checked to the base unit, and the contracts' events are read with the public ABIs
 * (x402's, written out below from its published contract), never with the devnet's own artifacts.
 */
import { x402Client, x402HTTPClient } from '@x402/core/client'
import { decodePaymentResponseHeader, HTTPFacilitatorClient } from '@x402/core/http'
import type { SchemeNetworkClient, SettleResponse } from '@x402/core/types'
import {
  BATCH_SETTLEMENT_ADDRESS,
  createPermit2ApprovalTx,
  ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  PERMIT2_ADDRESS,
  toClientEvmSigner,
  x402UptoPermit2ProxyABI,
  x402UptoPermit2ProxyAddress,
} from '@x402/evm'
import {
  BatchSettlementEvmScheme as BatchSettlementClientScheme,
  computeChannelId,
} from '@x402/evm/batch-settlement/client'
import {
  BatchSettlementEvmScheme as BatchSettlementServerScheme,
  InMemoryChannelStorage,
} from '@x402/evm/batch-settlement/server'
import { UptoEvmScheme as UptoClientScheme } from '@x402/evm/upto/client'
import { UptoEvmScheme as UptoServerScheme } from '@x402/evm/upto/server'
import { wrapFetchWithPayment } from '@x402/fetch'
import {
  paymentMiddleware,
  SETTLEMENT_OVERRIDES_HEADER,
  setSettlementOverrides,
  x402ResourceServer,
} from '@x402/hono'
import { Hono } from 'hono'
import {
  type Address,
  erc20Abi,
  type Hex,
  isAddressEqual,
  parseAbi,
  parseEventLogs,
  type TransactionReceipt,
  zeroAddress,
} from 'viem'
import { generatePrivateKey, privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { x402Permit2DepositCollectorAddress as permit2DepositCollectorAddress } from '../../src/sdk/chains.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'
import { eventArgs, expectForeignError } from '../support/protocolHarness.js'

/** x402's batch-settlement contract as published (`x402BatchSettlement`): what these tests call, every event, every error. */
const batchSettlementAbi = parseAbi([
  'struct ChannelConfig { address payer; address payerAuthorizer; address receiver; address receiverAuthorizer; address token; uint40 withdrawDelay; bytes32 salt; }',
  'struct Voucher { ChannelConfig channel; uint128 maxClaimableAmount; }',
  'struct VoucherClaim { Voucher voucher; bytes signature; uint128 totalClaimed; }',
  'function deposit(ChannelConfig config, uint128 amount, address collector, bytes collectorData)',
  'function claim(VoucherClaim[] voucherClaims)',
  'function claimWithSignature(VoucherClaim[] voucherClaims, bytes authorizerSignature)',
  'function refund(ChannelConfig config, uint128 amount)',
  'function refundWithSignature(ChannelConfig config, uint128 amount, uint256 nonce, bytes receiverAuthorizerSignature)',
  'function initiateWithdraw(ChannelConfig config, uint128 amount)',
  'function finalizeWithdraw(ChannelConfig config)',
  'function getChannelId(ChannelConfig config) view returns (bytes32)',
  'function channels(bytes32 channelId) view returns (uint128 balance, uint128 totalClaimed)',
  'function receivers(address receiver, address token) view returns (uint128 totalClaimed, uint128 totalSettled)',
  'function pendingWithdrawals(bytes32 channelId) view returns (uint128 amount, uint40 initiatedAt)',
  'function refundNonce(bytes32 channelId) view returns (uint256)',
  'function MIN_WITHDRAW_DELAY() view returns (uint40)',
  'function MAX_WITHDRAW_DELAY() view returns (uint40)',
  'function eip712Domain() view returns (bytes1 fields, string name, string version, uint256 chainId, address verifyingContract, bytes32 salt, uint256[] extensions)',
  'event ChannelCreated(bytes32 indexed channelId, ChannelConfig config)',
  'event ChannelClosed(bytes32 indexed channelId, ChannelConfig config)',
  'event Deposited(bytes32 indexed channelId, address indexed sender, uint128 amount, uint128 newBalance)',
  'event Claimed(bytes32 indexed channelId, address indexed sender, uint128 claimAmount, uint128 newTotalClaimed)',
  'event Settled(address indexed receiver, address indexed token, address indexed sender, uint128 amount)',
  'event Refunded(bytes32 indexed channelId, address indexed sender, uint128 amount)',
  'event WithdrawInitiated(bytes32 indexed channelId, uint128 amount, uint40 finalizeAfter)',
  'event WithdrawFinalized(bytes32 indexed channelId, address indexed sender, uint128 amount)',
  'error InvalidChannel()',
  'error ZeroDeposit()',
  'error DepositOverflow()',
  'error InvalidSignature()',
  'error NotReceiverAuthorizer()',
  'error NotAuthorizedToClaim()',
  'error NotAuthorizedToRefund()',
  'error ClaimExceedsCeiling()',
  'error ClaimExceedsBalance()',
  'error WithdrawalAlreadyPending()',
  'error WithdrawalNotPending()',
  'error NotAuthorizedToFinalizeWithdraw()',
  'error WithdrawDelayNotElapsed()',
  'error NothingToWithdraw()',
  'error WithdrawAmountExceedsAvailable()',
  'error WithdrawDelayOutOfRange()',
  'error EmptyBatch()',
  'error DepositCollectionFailed()',
  'error InvalidCollector()',
  'error InvalidRefundNonce()',
  'error ZeroRefund()',
])

/** x402's deposit collectors as published: their wiring and the one error a direct call meets. */
const depositCollectorAbi = parseAbi([
  'function x402BatchSettlement() view returns (address)',
  'function PERMIT2() view returns (address)',
  'function DEPOSIT_WITNESS_TYPE_STRING() view returns (string)',
  'function collect(address payer, address token, uint256 amount, bytes32 channelId, bytes collectorData)',
  'error OnlyX402BatchSettlement()',
])

const chains = [
  {
    chain: 'base-sepolia',
    token: 'Aave’s test USDC, Permit2 deposits',
    domain: { name: 'USDC', version: '1' },
    depositCollector: permit2DepositCollectorAddress,
  },
  {
    chain: 'base',
    token: 'Circle’s USDC, EIP-3009 deposits',
    domain: { name: 'USD Coin', version: '2' },
    depositCollector: ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
  },
] as const

describe.each(chains)('x402’s upto and batch-settlement schemes on $chain ($token)', (setting) => {
  let devnet: Devnet
  let clients: DevnetClients
  let facilitatorClient: HTTPFacilitatorClient
  useDevnet({ chain: setting.chain, facilitator: true }, async (started, built) => {
    devnet = started
    clients = built
    facilitatorClient = new HTTPFacilitatorClient({ url: started.facilitatorUrl as string })
    // x402's stock clients never send an approval: a buyer approves Permit2 once, as x402's docs tell it to.
    await mined(
      clients
        .walletFor(clients.buyer)
        .sendTransaction(createPermit2ApprovalTx(started.addresses.usdc)),
    )
  })

  const network = () => `eip155:${devnet.chainId}` as const
  const usdc = () => devnet.addresses.usdc
  const merchant = () => devnet.accounts.merchant.address
  const buyer = () => devnet.accounts.buyer.address
  const facilitator = () => devnet.accounts.facilitator.address
  const balanceOf = (owner: Address) =>
    clients.publicClient.readContract({
      address: usdc(),
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [owner],
    })
  const balances = async () => {
    const [ofBuyer, ofMerchant, inEscrow] = await Promise.all([
      balanceOf(buyer()),
      balanceOf(merchant()),
      balanceOf(BATCH_SETTLEMENT_ADDRESS),
    ])
    return { buyer: ofBuyer, merchant: ofMerchant, escrow: inEscrow }
  }
  async function mined(hash: Promise<Hex> | Hex): Promise<TransactionReceipt> {
    const receipt = await clients.publicClient.waitForTransactionReceipt({ hash: await hash })
    expect(receipt.status).toBe('success')
    return receipt
  }
  const receiptOf = (hash: string) => mined(hash as Hex)
  /** The token transfers a transaction made, as `[from, to, value]`. */
  const transfersIn = (receipt: TransactionReceipt) =>
    parseEventLogs({ abi: erc20Abi, eventName: 'Transfer', logs: receipt.logs })
      .filter((log) => isAddressEqual(log.address, usdc()))
      .map((log) => [log.args.from, log.args.to, log.args.value])
  const batchEvents = (receipt: TransactionReceipt) =>
    parseEventLogs({ abi: batchSettlementAbi, logs: receipt.logs }).filter((log) =>
      isAddressEqual(log.address, BATCH_SETTLEMENT_ADDRESS),
    )
  const settlementOf = (response: Response): SettleResponse => {
    const header = response.headers.get('PAYMENT-RESPONSE')
    expect(header).toBeTruthy()
    return decodePaymentResponseHeader(header as string)
  }

  /** A stock x402 buyer with `scheme`, spend controls on: on Base Sepolia opted in to the vault's USDC. */
  function buyerPaying(scheme: SchemeNetworkClient, app: Hono) {
    const client = new x402Client().register(network(), scheme)
    if (setting.chain === 'base-sepolia') {
      client.setSpendControls({ allowedAssets: [{ network: network(), asset: usdc() }] })
    }
    const appFetch: typeof fetch = async (input, init) => app.fetch(new Request(input, init))
    return { pay: wrapFetchWithPayment(appFetch, new x402HTTPClient(client)), appFetch }
  }
  const buyerSigner = () => toClientEvmSigner(clients.buyer, clients.publicClient)
  /** The price of a route in the vault's USDC, with the token's EIP-712 domain. */
  const priceOf = (amount: bigint, extra: Record<string, unknown> = {}) => ({
    amount: amount.toString(),
    asset: usdc(),
    extra: { ...setting.domain, ...extra },
  })

  it('upto: a route priced at a maximum of 0.05 USDC whose handler charges 0.012345 moves exactly 0.012345', async () => {
    const maximum = 50_000n
    const charged = 12_345n
    const server = new x402ResourceServer(facilitatorClient).register(
      network(),
      new UptoServerScheme(),
    )
    const app = new Hono()
    app.use(
      paymentMiddleware(
        {
          'GET /metered': {
            accepts: {
              scheme: 'upto',
              network: network(),
              payTo: merchant(),
              price: priceOf(maximum),
              maxTimeoutSeconds: 300,
            },
            description: 'a metered answer',
          },
        },
        server,
      ),
    )
    app.get('/metered', (c) => {
      setSettlementOverrides(c, { amount: charged.toString() })
      return c.json({ answer: 42 })
    })
    const { pay } = buyerPaying(new UptoClientScheme(buyerSigner()), app)
    const before = await balances()

    const response = await pay('http://shop.test/metered')
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ answer: 42 })
    // The middleware keeps the handler's override to itself.
    expect(response.headers.get(SETTLEMENT_OVERRIDES_HEADER)).toBeNull()
    const settled = settlementOf(response)
    expect(settled).toMatchObject({
      success: true,
      network: network(),
      payer: buyer(),
      amount: charged.toString(),
    })

    // One transaction from the facilitator to x402's upto proxy, which moved the charge and nothing else.
    const receipt = await receiptOf(settled.transaction)
    expect(receipt.from).toBe(facilitator().toLowerCase())
    expect(receipt.to).toBe(x402UptoPermit2ProxyAddress.toLowerCase())
    expect(transfersIn(receipt)).toEqual([[buyer(), merchant(), charged]])
    expect(
      parseEventLogs({ abi: x402UptoPermit2ProxyABI, logs: receipt.logs }).map(
        (log) => log.eventName,
      ),
    ).toEqual(['Settled'])
    const after = await balances()
    expect(after.merchant - before.merchant).toBe(charged)
    expect(before.buyer - after.buyer).toBe(charged)
  })

  it('batch-settlement: one deposit, a voucher per request, a batch claim and settle of exactly the charges, a cooperative refund of the rest', async () => {
    const price = 1_000n
    const requests = 5
    const storage = new InMemoryChannelStorage()
    // On Base the seller delegates its receiver authorizer to the facilitator (which advertises one); on Base Sepolia
    // it keeps a dedicated authorizer key of its own, as x402's docs advise. Both are x402's stock set-ups.
    const ownAuthorizer =
      setting.chain === 'base-sepolia' ? privateKeyToAccount(generatePrivateKey()) : undefined
    const serverScheme = new BatchSettlementServerScheme(merchant(), {
      storage,
      ...(ownAuthorizer ? { receiverAuthorizerSigner: ownAuthorizer } : {}),
    })
    const app = batchShop(serverScheme, price)
    const { pay } = buyerPaying(new BatchSettlementClientScheme(buyerSigner()), app)
    const before = await balances()

    const settlements: SettleResponse[] = []
    for (let request = 0; request < requests; request++) {
      const response = await pay('http://shop.test/tick')
      expect(response.status).toBe(200)
      settlements.push(settlementOf(response))
    }
    // The first request deposits (a transaction); the others are vouchers alone (no transaction, nothing moves).
    expect(settlements.map((settled) => settled.success)).toEqual(Array(requests).fill(true))
    expect(settlements[0]?.transaction).toMatch(/^0x[0-9a-f]{64}$/)
    expect(settlements.slice(1).map((settled) => settled.transaction)).toEqual(
      Array(requests - 1).fill(''),
    )

    const deposit = await receiptOf(settlements[0]?.transaction as string)
    expect(deposit.from).toBe(facilitator().toLowerCase())
    expect(deposit.to).toBe(BATCH_SETTLEMENT_ADDRESS.toLowerCase())
    expect(batchEvents(deposit).map((log) => log.eventName)).toEqual([
      'ChannelCreated',
      'Deposited',
    ])
    const { channelId, config } = eventArgs(batchSettlementAbi, 'ChannelCreated', deposit.logs)
    // The channel is the buyer's with the merchant, in the vault's USDC, under x402's id for it.
    expect(config).toMatchObject({ payer: buyer(), receiver: merchant(), token: usdc() })
    expect(config.receiverAuthorizer).toBe(ownAuthorizer?.address ?? facilitator())
    expect(channelId).toBe(computeChannelId(config, network()))
    const deposited = eventArgs(batchSettlementAbi, 'Deposited', deposit.logs)
    const depositAmount = deposited.amount
    // x402's server announces 10 × the price as the least deposit, and the buyer deposits that.
    expect(depositAmount).toBe(10n * price)
    expect(deposited).toEqual({
      channelId,
      sender: facilitator(),
      amount: depositAmount,
      newBalance: depositAmount,
    })
    // On Base the EIP-3009 collector receives the authorization and passes it on; through Permit2 it goes direct.
    expect(transfersIn(deposit)).toEqual(
      setting.chain === 'base'
        ? [
            [buyer(), ERC3009_DEPOSIT_COLLECTOR_ADDRESS, depositAmount],
            [ERC3009_DEPOSIT_COLLECTOR_ADDRESS, BATCH_SETTLEMENT_ADDRESS, depositAmount],
          ]
        : [[buyer(), BATCH_SETTLEMENT_ADDRESS, depositAmount]],
    )
    const afterRequests = await balances()
    expect(afterRequests).toEqual({
      buyer: before.buyer - depositAmount,
      merchant: before.merchant, // the money sits in escrow: none of it is the merchant's yet
      escrow: before.escrow + depositAmount,
    })

    // The seller's channel manager claims the vouchers in one batch, then settles the claimed total to the merchant.
    const charged = price * BigInt(requests)
    const manager = serverScheme.createChannelManager(facilitatorClient, network(), usdc())
    const { claims, settle } = await manager.claimAndSettle()
    expect(claims).toEqual([{ vouchers: 1, transaction: expect.stringMatching(/^0x/) }])
    const claim = await receiptOf(claims[0]?.transaction as string)
    expect(batchEvents(claim).map((log) => [log.eventName, log.args])).toEqual([
      [
        'Claimed',
        { channelId, sender: facilitator(), claimAmount: charged, newTotalClaimed: charged },
      ],
    ])
    expect(transfersIn(claim)).toEqual([])
    const settlement = await receiptOf(settle?.transaction as string)
    expect(batchEvents(settlement).map((log) => [log.eventName, log.args])).toEqual([
      ['Settled', { receiver: merchant(), token: usdc(), sender: facilitator(), amount: charged }],
    ])
    expect(transfersIn(settlement)).toEqual([[BATCH_SETTLEMENT_ADDRESS, merchant(), charged]])
    expect((await balances()).merchant).toBe(before.merchant + charged)

    // What was never charged goes back to the buyer: a cooperative refund through the facilitator.
    const refunds = await manager.refund([channelId])
    expect(refunds).toEqual([{ channel: channelId, transaction: expect.stringMatching(/^0x/) }])
    const refund = await receiptOf(refunds[0]?.transaction as string)
    const rest = depositAmount - charged
    // The channel has claims, so it is refunded but not closed.
    expect(batchEvents(refund).map((log) => [log.eventName, log.args])).toEqual([
      ['Refunded', { channelId, sender: facilitator(), amount: rest }],
    ])
    expect(transfersIn(refund)).toEqual([[BATCH_SETTLEMENT_ADDRESS, buyer(), rest]])

    // Every unit accounted for: the buyer paid exactly the charges, the merchant got them, the escrow is as before.
    expect(await balances()).toEqual({
      buyer: before.buyer - charged,
      merchant: before.merchant + charged,
      escrow: before.escrow,
    })
    const contract = { address: BATCH_SETTLEMENT_ADDRESS, abi: batchSettlementAbi } as const
    const read = clients.publicClient.readContract
    expect(await read({ ...contract, functionName: 'channels', args: [channelId] })).toEqual([
      charged,
      charged,
    ])
    expect(await read({ ...contract, functionName: 'refundNonce', args: [channelId] })).toBe(1n)
    expect(
      await read({ ...contract, functionName: 'receivers', args: [merchant(), usdc()] }),
    ).toEqual([charged, charged])
  })

  it('batch-settlement: a buyer’s refund request through the route claims the vouchers and refunds the rest in one transaction', async () => {
    const price = 2_500n
    const serverScheme = new BatchSettlementServerScheme(merchant(), {
      storage: new InMemoryChannelStorage(),
    })
    const app = batchShop(serverScheme, price)
    const clientScheme = new BatchSettlementClientScheme(buyerSigner())
    const { pay, appFetch } = buyerPaying(clientScheme, app)
    const before = await balances()
    for (const _ of [1, 2, 3]) expect((await pay('http://shop.test/tick')).status).toBe(200)
    const charged = 3n * price

    // x402's client asks the seller's route for its money back; the seller's scheme adds the unclaimed vouchers, and
    // the facilitator sends claim and refund together through the contract's multicall.
    const refunded = await clientScheme.refund('http://shop.test/tick', { fetch: appFetch })
    expect(refunded).toMatchObject({ success: true, payer: buyer() })
    const receipt = await receiptOf(refunded.transaction)
    const events = batchEvents(receipt)
    expect(events.map((log) => log.eventName)).toEqual(['Claimed', 'Refunded'])
    expect(events[0]?.args).toMatchObject({ claimAmount: charged, newTotalClaimed: charged })
    const rest = 10n * price - charged
    expect(events[1]?.args).toMatchObject({ amount: rest })
    expect(refunded.amount).toBe(rest.toString())

    // The claimed charges are the merchant's once settled.
    const manager = serverScheme.createChannelManager(facilitatorClient, network(), usdc())
    await receiptOf((await manager.settle()).transaction)
    expect(await balances()).toEqual({
      buyer: before.buyer - charged,
      merchant: before.merchant + charged,
      escrow: before.escrow,
    })
  })

  it('the facilitator lists x402’s three EVM schemes on this chain', async () => {
    const { kinds } = await facilitatorClient.getSupported()
    expect(kinds.map((kind) => [kind.scheme, kind.network])).toEqual([
      ['exact', network()],
      ['upto', network()],
      ['batch-settlement', network()],
    ])
  })

  it('answers at x402’s addresses, wired as x402’s packages expect, and refuses what the live contract refuses', async () => {
    const read = clients.publicClient.readContract
    for (const address of [
      BATCH_SETTLEMENT_ADDRESS,
      ERC3009_DEPOSIT_COLLECTOR_ADDRESS,
      permit2DepositCollectorAddress,
    ]) {
      expect(await clients.publicClient.getCode({ address }), address).toMatch(/^0x[0-9a-f]{100,}/)
    }
    const [, name, version, chainId, verifyingContract] = await read({
      address: BATCH_SETTLEMENT_ADDRESS,
      abi: batchSettlementAbi,
      functionName: 'eip712Domain',
    })
    expect({ name, version, chainId, verifyingContract }).toEqual({
      name: 'x402 Batch Settlement',
      version: '1',
      chainId: BigInt(devnet.chainId),
      verifyingContract: BATCH_SETTLEMENT_ADDRESS,
    })
    for (const collector of [ERC3009_DEPOSIT_COLLECTOR_ADDRESS, permit2DepositCollectorAddress]) {
      expect(
        await read({
          address: collector,
          abi: depositCollectorAbi,
          functionName: 'x402BatchSettlement',
        }),
      ).toBe(BATCH_SETTLEMENT_ADDRESS)
    }
    expect(
      await read({
        address: permit2DepositCollectorAddress,
        abi: depositCollectorAbi,
        functionName: 'PERMIT2',
      }),
    ).toBe(PERMIT2_ADDRESS)

    const config: ChannelConfig = {
      payer: buyer(),
      payerAuthorizer: buyer(),
      receiver: merchant(),
      receiverAuthorizer: facilitator(),
      token: usdc(),
      withdrawDelay: 900,
      salt: `0x${'00'.repeat(32)}`,
    }
    expect(
      await read({
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: batchSettlementAbi,
        functionName: 'getChannelId',
        args: [config],
      }),
    ).toBe(computeChannelId(config, network()))

    const simulate = (functionName: string, args: readonly unknown[], from: Address = buyer()) =>
      clients.publicClient.simulateContract({
        account: from,
        address: BATCH_SETTLEMENT_ADDRESS,
        abi: batchSettlementAbi,
        functionName: functionName as 'deposit',
        args: args as never,
      })
    const refuses = (name: string, action: Promise<unknown>) =>
      expectForeignError(action, batchSettlementAbi, name, [])
    const deposit = (
      changed: Partial<ChannelConfig>,
      amount = 1_000n,
      collector = setting.depositCollector,
    ) => simulate('deposit', [{ ...config, ...changed }, amount, collector, '0x'])
    await refuses('InvalidChannel', deposit({ receiverAuthorizer: zeroAddress }))
    await refuses('WithdrawDelayOutOfRange', deposit({ withdrawDelay: 899 }))
    await refuses('WithdrawDelayOutOfRange', deposit({ withdrawDelay: 30 * 86_400 + 1 }))
    await refuses('ZeroDeposit', deposit({}, 0n))
    await refuses('InvalidCollector', deposit({}, 1_000n, zeroAddress))
    await refuses('EmptyBatch', simulate('claim', [[]]))
    const voucherClaim = {
      voucher: { channel: config, maxClaimableAmount: 10n },
      signature: '0x',
      totalClaimed: 5n,
    }
    await refuses('NotAuthorizedToClaim', simulate('claim', [[voucherClaim]]))
    // The receiver may claim, but a claim above the voucher's ceiling or the escrow is refused before any signature.
    await refuses(
      'ClaimExceedsCeiling',
      simulate('claim', [[{ ...voucherClaim, totalClaimed: 11n }]], merchant()),
    )
    await refuses('ClaimExceedsBalance', simulate('claim', [[voucherClaim]], merchant()))
    await refuses(
      'InvalidSignature',
      simulate('claimWithSignature', [[voucherClaim], `0x${'11'.repeat(65)}`]),
    )
    await refuses('NotAuthorizedToRefund', simulate('refund', [config, 1n]))
    await refuses('ZeroRefund', simulate('refund', [config, 0n], merchant()))
    await refuses('InvalidRefundNonce', simulate('refundWithSignature', [config, 1n, 1n, '0x']))
    await refuses('InvalidChannel', simulate('initiateWithdraw', [config, 1n], merchant()))
    await refuses('NothingToWithdraw', simulate('initiateWithdraw', [config, 0n]))
    await refuses('WithdrawAmountExceedsAvailable', simulate('initiateWithdraw', [config, 1n]))
    await refuses('WithdrawalNotPending', simulate('finalizeWithdraw', [config]))
    await refuses(
      'NotAuthorizedToFinalizeWithdraw',
      simulate('finalizeWithdraw', [config], merchant()),
    )
    // Only the batch-settlement contract may make a collector pull a buyer's tokens.
    await expectForeignError(
      clients.publicClient.simulateContract({
        account: buyer(),
        address: setting.depositCollector,
        abi: depositCollectorAbi,
        functionName: 'collect',
        args: [buyer(), usdc(), 1_000n, `0x${'00'.repeat(32)}`, '0x'],
      }),
      depositCollectorAbi,
      'OnlyX402BatchSettlement',
      [],
    )
  })

  /** A Hono shop selling `GET /tick` for `price` through x402's batch-settlement server scheme. */
  function batchShop(serverScheme: BatchSettlementServerScheme, price: bigint): Hono {
    const server = new x402ResourceServer(facilitatorClient).register(network(), serverScheme)
    const app = new Hono()
    app.use(
      paymentMiddleware(
        {
          'GET /tick': {
            accepts: {
              scheme: 'batch-settlement',
              network: network(),
              payTo: merchant(),
              // Aave's test USDC has no EIP-3009: its deposits go through Permit2.
              price: priceOf(
                price,
                setting.chain === 'base-sepolia' ? { assetTransferMethod: 'permit2' } : {},
              ),
              maxTimeoutSeconds: 300,
            },
            description: 'one tick',
          },
        },
        server,
      ),
    )
    app.get('/tick', (c) => c.json({ tick: true }))
    return app
  }
})

type ChannelConfig = {
  payer: Address
  payerAuthorizer: Address
  receiver: Address
  receiverAuthorizer: Address
  token: Address
  withdrawDelay: number
  salt: Hex
}
