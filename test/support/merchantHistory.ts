/**
 * A merchant's money history with a known answer, made on a devnet with real transactions: x402 payments
 * settled by x402's own facilitator code (EIP-3009 where the vault's USDC has it, else Permit2 through
 * x402's exact proxy, with and without the EIP-2612 gas sponsoring), a plain transfer in, one out, sweeps,
 * a month of yield, a partial withdrawal and a full one; on Base Sepolia also a payment in Circle's test
 * USDC. Three x402 payments are self-payments: from the merchant's wallet to itself, from its operator,
 * and from an address of its own that the ledger is told of (`selfPayers`). It records what each step
 * moved, from the SDK's results, for the ledger tests to compare with.
 */
import { x402Client } from '@x402/core/client'
import type { PaymentRequirements } from '@x402/core/types'
import { createPermit2ApprovalTx, toClientEvmSigner } from '@x402/evm'
import { ExactEvmScheme } from '@x402/evm/exact/client'
import { declareEip2612GasSponsoringExtension } from '@x402/extensions'
import { type Address, erc20Abi, type Hash, type PrivateKeyAccount } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { waitForTransactionReceipt } from 'viem/actions'
import { createDevnetFacilitator } from '../../src/devnet/facilitator.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { type LedgerEntryKind, parseUsdc } from '../../src/index.js'
import { routerAbi } from '../../src/sdk/abis/index.js'
import type { DevnetClients } from './devnet.js'

/** One movement the history made, as the ledger should list it. */
export type ExpectedEntry = {
  kind: LedgerEntryKind
  direction: 'in' | 'out'
  token: Address
  txHash: Hash
  counterparty: Address
  amount: bigint
  x402Method: 'eip3009' | 'permit2' | null
  shares: bigint
  fee: bigint
  yieldRealised: bigint
}

/** The history's blocks and what it did, in order. */
export type MerchantHistory = {
  /** The first block of the history (the one after the setup). */
  fromBlock: bigint
  /** The last block of the history. */
  toBlock: bigint
  entries: ExpectedEntry[]
  /** The x402 methods the vault's USDC is paid with on this devnet. */
  method: 'eip3009' | 'permit2'
  /** The wallet's operator on the router, made before the history: its payments are self-payments. */
  operator: Address
  /** Another address of the merchant's, for the ledger's `selfPayers` (`--self`). */
  selfPayers: Address[]
}

/** Fixed test keys: the merchant's operator and another wallet of its own (devnet only). */
const operatorKey = `0x${'0b'.repeat(32)}` as const
const ownWalletKey = `0x${'0c'.repeat(32)}` as const

const month = 30n * 24n * 3600n

/**
 * Makes the history on the devnet and returns what it did. The merchant must hold at least 100 USDC of
 * each token and the buyer at least 50 (the devnet's default funding is 1,000 each).
 *
 * @param devnet - A devnet: on Base Sepolia its buyers pay through Permit2, on Base with EIP-3009.
 * @param t - Its clients.
 * @returns The blocks and the expected entries, in chain order.
 * @example
 * const history = await makeMerchantHistory(devnet, t)
 * const ledger = await t.readOnly.getLedger({ wallet, fromBlock: history.fromBlock, toBlock: history.toBlock })
 */
export async function makeMerchantHistory(
  devnet: Devnet,
  t: DevnetClients,
): Promise<MerchantHistory> {
  const usdc = devnet.addresses.usdc
  const { router } = devnet.addresses
  const merchant = t.merchant.address
  const buyer = privateKeyToAccount(devnet.accounts.buyer.privateKey)
  const facilitator = createDevnetFacilitator({
    rpcUrl: devnet.rpcUrl,
    chain: devnet.viemChain,
    account: privateKeyToAccount(devnet.accounts.facilitator.privateKey),
  })
  const method = devnet.chain === 'base-sepolia' ? 'permit2' : 'eip3009'
  const operator = privateKeyToAccount(operatorKey)
  const ownWallet = privateKeyToAccount(ownWalletKey)
  // Setup, before the history's first block: registration, the operator (so only the router's
  // isOperator says it is one), and USDC for the two payers of the merchant's own, from the buyer.
  await t.vault.ensureInitializedAndWait()
  await mined(
    t,
    await t.walletFor(t.merchant).writeContract({
      address: router,
      abi: routerAbi,
      functionName: 'setOperator',
      args: [operator.address, true],
    }),
  )
  for (const payer of [operator, ownWallet]) {
    await mined(
      t,
      await t.walletFor(buyer).writeContract({
        address: usdc,
        abi: erc20Abi,
        functionName: 'transfer',
        args: [payer.address, parseUsdc('10')],
      }),
    )
  }
  const fromBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
  const entries: ExpectedEntry[] = []
  const none = { x402Method: null, shares: 0n, fee: 0n, yieldRealised: 0n } as const

  const pay = async (
    amount: bigint,
    options: { token?: Address; sponsored?: boolean; payer?: PrivateKeyAccount } = {},
  ) => {
    const token = options.token ?? usdc
    const payer = options.payer ?? buyer
    const tokenMethod: 'eip3009' | 'permit2' = token === usdc ? method : 'eip3009'
    const txHash = await settle(devnet, facilitator, payer, t, {
      token,
      amount,
      method: tokenMethod,
      sponsored: options.sponsored ?? false,
    })
    const paid = {
      ...none,
      token,
      txHash,
      counterparty: payer.address,
      amount,
      x402Method: tokenMethod,
    }
    entries.push({ ...paid, kind: payer === buyer ? 'x402' : 'self-payment', direction: 'in' })
    // A payment to itself leaves the wallet as it comes in: the same Transfer, listed out too.
    if (payer.address === merchant)
      entries.push({ ...paid, kind: 'self-payment', direction: 'out' })
  }
  const transfer = async (from: PrivateKeyAccount, to: Address, amount: bigint) => {
    const txHash = await t.walletFor(from).writeContract({
      address: usdc,
      abi: erc20Abi,
      functionName: 'transfer',
      args: [to, amount],
    })
    await mined(t, txHash)
    return txHash
  }
  const sweep = async (amount: bigint) => {
    const result = await t.vault.depositAndWait({ amount })
    entries.push({
      ...none,
      kind: 'sweep',
      direction: 'out',
      token: usdc,
      txHash: result.txHash,
      counterparty: router,
      amount,
      shares: result.sharesMinted,
    })
  }
  const withdraw = async (params: { amount: bigint } | { shares: bigint }) => {
    const result = await t.vault.withdrawAndWait(params)
    entries.push({
      kind: 'withdrawal',
      direction: 'in',
      token: usdc,
      txHash: result.txHash,
      counterparty: router,
      amount: result.usdcReturned,
      x402Method: null,
      shares: result.sharesBurned,
      fee: result.feePaid,
      yieldRealised: result.yieldEarned,
    })
  }

  // Through Permit2, the first payment comes from a buyer who never approved Permit2 (x402's EIP-2612
  // gas sponsoring: `settleWithPermit`); then the buyer approves it once, and pays with `settle`.
  await pay(parseUsdc('1.25'), { sponsored: method === 'permit2' })
  if (method === 'permit2') {
    await mined(t, await t.walletFor(buyer).sendTransaction(createPermit2ApprovalTx(usdc)))
  }
  await pay(parseUsdc('0.5'))
  const direct = parseUsdc('5')
  entries.push({
    ...none,
    kind: 'transfer-in',
    direction: 'in',
    token: usdc,
    txHash: await transfer(buyer, merchant, direct),
    counterparty: buyer.address,
    amount: direct,
  })
  if (devnet.tokens.circleTestUsdc)
    await pay(parseUsdc('0.75'), { token: devnet.tokens.circleTestUsdc })
  await sweep(parseUsdc('40'))
  await pay(parseUsdc('2'))
  // Self-payments: the merchant pays itself, its operator pays it, and another wallet of its own.
  // Through Permit2 each is a first payment (the EIP-2612 gas sponsoring path).
  const sponsored = method === 'permit2'
  await pay(parseUsdc('0.3'), {
    payer: privateKeyToAccount(devnet.accounts.merchant.privateKey),
    sponsored,
  })
  await pay(parseUsdc('0.2'), { payer: operator, sponsored })
  await pay(parseUsdc('0.1'), { payer: ownWallet, sponsored })
  await sweep(parseUsdc('20'))
  const sent = parseUsdc('1')
  const payee = devnet.accounts.deployer.address
  entries.push({
    ...none,
    kind: 'transfer-out',
    direction: 'out',
    token: usdc,
    txHash: await transfer(t.merchant, payee, sent),
    counterparty: payee,
    amount: sent,
  })
  await devnet.advanceTime(month)
  await withdraw({ amount: parseUsdc('15') })
  await withdraw({ shares: await t.vault.getShareBalance({ wallet: merchant }) })
  // Not viem's cached block number (up to a polling interval old): the last withdrawal's block.
  const toBlock = await t.publicClient.getBlockNumber({ cacheTime: 0 })
  return {
    fromBlock,
    toBlock,
    entries,
    method,
    operator: operator.address,
    selfPayers: [ownWallet.address],
  }
}

/** Pays the merchant with x402's own client, settled by x402's own facilitator code; returns the transaction. */
async function settle(
  devnet: Devnet,
  facilitator: ReturnType<typeof createDevnetFacilitator>,
  buyer: PrivateKeyAccount,
  t: DevnetClients,
  payment: { token: Address; amount: bigint; method: 'eip3009' | 'permit2'; sponsored: boolean },
): Promise<Hash> {
  const network = `eip155:${devnet.chainId}` as const
  const name = await t.publicClient.readContract({
    address: payment.token,
    abi: [
      {
        type: 'function',
        name: 'name',
        inputs: [],
        outputs: [{ type: 'string' }],
        stateMutability: 'view',
      },
    ],
    functionName: 'name',
  })
  const version = payment.method === 'permit2' ? '1' : '2'
  const requirements: PaymentRequirements = {
    scheme: 'exact',
    network,
    asset: payment.token,
    amount: payment.amount.toString(),
    payTo: devnet.accounts.merchant.address,
    maxTimeoutSeconds: 300,
    extra: {
      name,
      version,
      ...(payment.method === 'permit2' ? { assetTransferMethod: 'permit2' } : {}),
    },
  }
  const client = new x402Client()
    .register(network, new ExactEvmScheme(toClientEvmSigner(buyer, t.publicClient)))
    // As a real buyer would: opt in to the asset x402 does not know by default (the vault's test USDC
    // on Base Sepolia), and raise the $1 cap on default assets for the history's 1.25 and 2 USDC sales.
    .setSpendControls({
      maxAmountPerPayment: '$5',
      allowedAssets: [{ network, asset: payment.token }],
    })
  const signed = await client.createPaymentPayload({
    x402Version: 2,
    resource: { url: 'http://127.0.0.1/paid', description: 'test', mimeType: 'application/json' },
    accepts: [requirements],
    ...(payment.sponsored ? { extensions: declareEip2612GasSponsoringExtension() } : {}),
  })
  const settled = await facilitator.settle(signed, requirements)
  if (!settled.success) throw new Error(`x402 settlement failed: ${settled.errorReason}`)
  await mined(t, settled.transaction as Hash)
  return settled.transaction as Hash
}

async function mined(t: DevnetClients, hash: Hash): Promise<void> {
  const receipt = await waitForTransactionReceipt(t.publicClient, { hash })
  if (receipt.status !== 'success') throw new Error(`transaction ${hash} reverted`)
}
