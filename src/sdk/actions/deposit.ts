import { type Account, type Address, type Hash, isAddressEqual, parseSignature } from 'viem'
import { signTypedData, simulateContract } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import { permitTypes } from '../abis/usdc.js'
import type { VaultContext, VaultWalletClient } from '../context.js'
import { VaultError, VaultPreconditionError, VaultValidationError } from '../errors/classes.js'
import type { VaultErrorCode } from '../errors/codes.js'
import {
  assertDepositPossible,
  type DepositChecks,
  readDepositChecks,
} from '../internal/depositPreflight.js'
import { tokenDomainOf } from '../internal/permitDomain.js'
import { type DecodeContext, guard } from '../internal/read.js'
import {
  applySlippage,
  resolveAccount,
  validateAmount,
  validateSlippage,
  validateUint256,
  validateWallet,
} from '../internal/validate.js'
import type { SentTransaction } from '../internal/waitForNonceSlot.js'
import {
  type PreparedWrite,
  prepareWrite,
  requireRouterEvent,
  sendPrepared,
  sendRequest,
  waitForSuccess,
} from '../internal/write.js'
import {
  assertSlotFor,
  runExclusive,
  sendExclusive,
  type WriteSlot,
} from '../internal/writeQueue.js'
import { formatUsdc } from '../money.js'
import type { WaitOptions } from '../transactions.js'
import { approveUsdcAndWaitIn } from './approveUsdc.js'
import type { VenueName } from './getYield.js'

export type DepositParameters = {
  /** USDC base units. */
  amount: bigint
  /** The registered wallet that pays and receives the shares. Default: the sending account. */
  wallet?: Address | undefined
  /** Tolerance on the shares minted, in bps (0–1000). Default 10. */
  slippageBps?: number | undefined
  /** Overrides the computed minimum of shares (advanced; normally leave it to `slippageBps`). */
  minSharesOut?: bigint | undefined
  /**
   * `'auto'` (default): when the allowance is short, sign an EIP-2612 permit and deposit in one
   * transaction (`depositWithPermit`) if the USDC supports it, else approve then deposit.
   * `'never'`: always approve then deposit.
   */
  permit?: 'auto' | 'never' | undefined
  /** The sending account. Default: the wallet client's account. */
  account?: Account | Address | undefined
}

/** How the deposit was sent. */
export type DepositMethod = 'deposit' | 'depositWithPermit'

/** A confirmed deposit, read from the router's `Deposited` log. */
export type DepositResult = {
  txHash: Hash
  wallet: Address
  /** USDC deposited (base units). */
  usdcAmount: bigint
  /** Shares minted (base units). */
  sharesMinted: bigint
  /** The venue the router chose. */
  venue: VenueName
  vaultType: number
  method: DepositMethod
  /** The approval sent first, when there was one. */
  approvalTxHash?: Hash
  blockNumber: bigint
}

/**
 * Deposits USDC into the vault: checks (pause, registration, minimum, TVL cap, balance) in one round
 * trip, then, when the router's allowance is short, uses an EIP-2612 permit in the same transaction
 * (`depositWithPermit`) or falls back to approve-then-deposit. Every transaction is simulated first; a
 * deposit that would fail is refused before anything is sent (e.g. `BELOW_MIN_DEPOSIT`), also when
 * its gas estimate fails.
 *
 * Runs in the sending account's write queue: after every earlier write from that account has its
 * receipt, and holding the account until this transaction has its own. A nonce another process took
 * first is `NONCE_CONFLICT` (retryable).
 *
 * @param ctx - The vault client, with a wallet client.
 * @param params - `amount`, `wallet`, `slippageBps`, `minSharesOut`, `permit`, `account`.
 * @returns The deposit transaction's hash (an approval, if one was needed, is already confirmed).
 * @throws {VaultPreconditionError} `DEPOSITS_PAUSED`, `BELOW_MIN_DEPOSIT`, `TVL_CAP_EXCEEDED`,
 *   `INSUFFICIENT_USDC`, `WALLET_NOT_REGISTERED`, `INSUFFICIENT_ALLOWANCE`; {VaultContractError} from the simulation.
 * @example
 * const hash = await vault.deposit({ amount: parseUsdc('25') })
 */
export function deposit(ctx: VaultContext, params: DepositParameters): Promise<Hash> {
  return sendExclusive(ctx, params.account, (slot) => sendDepositIn(slot, ctx, params))
}

/**
 * Deposits and waits for the receipt; returns what the router's `Deposited` log says.
 *
 * @param ctx - The vault client, with a wallet client.
 * @param params - As `deposit`, plus `confirmations` and `timeout`.
 * @returns `{ txHash, sharesMinted, usdcAmount, venue, method, approvalTxHash?, … }`.
 * @example
 * const { txHash, sharesMinted } = await vault.depositAndWait({ amount: parseUsdc('25') })
 */
export function depositAndWait(
  ctx: VaultContext,
  params: DepositParameters & WaitOptions,
): Promise<DepositResult> {
  return runExclusive(ctx, params.account, (slot) => depositAndWaitIn(slot, ctx, params))
}

/**
 * The body of {@link depositAndWait} for a caller that already holds the account's write slot (see
 * `runExclusive`).
 *
 * @param slot - The sending account's write slot.
 * @param ctx - The vault client, with a wallet client.
 * @param params - As `depositAndWait`.
 * @returns As `depositAndWait`.
 */
export async function depositAndWaitIn(
  slot: WriteSlot,
  ctx: VaultContext,
  params: DepositParameters & WaitOptions,
): Promise<DepositResult> {
  return confirmDeposit(ctx, await sendDepositIn(slot, ctx, params), params)
}

/** A deposit sent and not yet confirmed: what {@link confirmDeposit} needs. */
export type SentDeposit = SentTransaction & {
  wallet: Address
  method: DepositMethod
  approvalTxHash?: Hash
}

/**
 * Waits for a sent deposit's receipt and reads what the router's `Deposited` log says. When another
 * transaction with the same nonce replaced it and was mined, that one's receipt is read, and its hash
 * is the result's `txHash`.
 *
 * @param ctx - The vault client.
 * @param sent - What {@link sendDepositIn} returned.
 * @param options - `confirmations`, `timeout`.
 * @returns As `depositAndWait`.
 */
export async function confirmDeposit(
  ctx: VaultContext,
  sent: SentDeposit,
  options: WaitOptions = {},
): Promise<DepositResult> {
  const receipt = await waitForSuccess(ctx, sent, 'Deposit', options)
  const log = requireRouterEvent(ctx, receipt, 'Deposited', sent.wallet, 'Deposit')
  return {
    // viem answers with the receipt of a transaction that replaced ours (same nonce): say which.
    txHash: receipt.transactionHash,
    wallet: sent.wallet,
    usdcAmount: log.args.usdcAmount,
    sharesMinted: log.args.dvUsdcMinted,
    venue: log.args.vaultType === 0 ? 'aave' : 'morpho',
    vaultType: log.args.vaultType,
    method: sent.method,
    ...(sent.approvalTxHash ? { approvalTxHash: sent.approvalTxHash } : {}),
    blockNumber: receipt.blockNumber,
  }
}

/**
 * Sends a deposit in a write slot the caller holds, and returns once it is sent. The seller sweeper
 * passes the checks it read its balance with (one round trip for both) and confirms the deposit with
 * {@link confirmDeposit} as a separate step, so it can tell a failed send from a failed receipt.
 *
 * @param slot - The sending account's write slot.
 * @param ctx - The vault client, with a wallet client.
 * @param params - As `deposit`.
 * @param knownChecks - The deposit checks for `params.amount`, read in this slot; read here when absent.
 * @returns The sent transaction.
 */
export async function sendDepositIn(
  slot: WriteSlot,
  ctx: VaultContext,
  params: DepositParameters,
  knownChecks?: DepositChecks,
): Promise<SentDeposit> {
  const { walletClient, account, address } = resolveAccount(ctx, params.account)
  assertSlotFor(slot, ctx, address)
  const wallet = params.wallet === undefined ? address : validateWallet(params.wallet)
  const amount = validateAmount(params.amount)
  const slippageBps = validateSlippage(params.slippageBps)
  const minSharesOverride =
    params.minSharesOut === undefined
      ? undefined
      : validateUint256(params.minSharesOut, 'minSharesOut')
  if (params.permit !== undefined && params.permit !== 'auto' && params.permit !== 'never') {
    throw new VaultValidationError("permit must be 'auto' or 'never'.", {
      code: 'INVALID_ARGUMENT',
      details: { field: 'permit' },
    })
  }

  const checks = knownChecks ?? (await readDepositChecks(ctx, wallet, amount, 'Deposit'))
  assertDepositPossible(checks, amount)
  if (!checks.registered) {
    throw new VaultPreconditionError(
      `Wallet ${wallet} is not registered with the vault router; register it first with ensureInitializedAndWait({ wallet }) (or initialize() from the wallet).`,
      { code: 'WALLET_NOT_REGISTERED', details: { wallet } },
    )
  }
  const minSharesOut = minSharesOverride ?? applySlippage(checks.expectedShares, slippageBps)
  const decode: DecodeContext = { ...ctx, morphoReachable: checks.morphoReachable }
  const simulateDeposit = () =>
    guard(decode, 'Deposit simulation', () =>
      simulateContract(ctx.publicClient, {
        account,
        address: ctx.addresses.router,
        abi: routerAbi,
        functionName: 'deposit',
        args: [amount, wallet, minSharesOut],
      }),
    )

  // Each send pins its nonce to the block its inputs were read at (see prepareWrite).
  if (checks.allowance >= amount) {
    const { request } = await simulateDeposit()
    return {
      ...(await sendRequest(decode, walletClient, account, request, 'Deposit', checks.blockNumber)),
      wallet,
      method: 'deposit',
    }
  }

  const ownWallet = isAddressEqual(wallet, address)
  if ((params.permit ?? 'auto') === 'auto' && ownWallet) {
    const sent = await tryPermitDeposit(
      decode,
      walletClient,
      account,
      wallet,
      amount,
      minSharesOut,
      checks,
    )
    if (sent) return { ...sent, wallet, method: 'depositWithPermit' }
  }
  if (!ownWallet) {
    throw new VaultPreconditionError(
      `Wallet ${wallet} has approved the router for ${formatUsdc(checks.allowance)} USDC, less than ${formatUsdc(amount)}; the wallet itself must approve it (an operator cannot).`,
      {
        code: 'INSUFFICIENT_ALLOWANCE',
        details: { allowance: checks.allowance, amount, shortfall: amount - checks.allowance },
      },
    )
  }
  const approval = await approveUsdcAndWaitIn(slot, ctx, { amount, account }, checks.blockNumber)
  const { request } = await simulateDeposit()
  return {
    ...(await sendRequest(decode, walletClient, account, request, 'Deposit', approval.blockNumber)),
    wallet,
    method: 'deposit',
    approvalTxHash: approval.txHash,
  }
}

/**
 * Deposits with an EIP-2612 permit when the USDC supports it; `undefined` means "use approve instead":
 * the USDC has no usable permit, or the permit deposit's simulation or gas estimate fails for a reason
 * an approval fixes (the router swallows a failed permit and then finds no allowance; the signature or
 * its nonce may be stale because another sender used the permit first).
 */
async function tryPermitDeposit(
  ctx: DecodeContext,
  walletClient: VaultWalletClient,
  account: Account | Address,
  wallet: Address,
  amount: bigint,
  minSharesOut: bigint,
  checks: DepositChecks,
): Promise<SentTransaction | undefined> {
  const permit = checks.permit
  if (!permit) return undefined
  const domain = tokenDomainOf(permit, ctx.chainId, ctx.addresses.usdc)
  if (!domain) return undefined

  const deadline = checks.blockTimestamp + 1800n
  const signature = await guard(ctx, 'Permit signature', () =>
    signTypedData(walletClient, {
      account,
      domain,
      types: permitTypes,
      primaryType: 'Permit',
      message: {
        owner: wallet,
        spender: ctx.addresses.router,
        value: amount,
        nonce: permit.nonce,
        deadline,
      },
    }),
  )
  const { r, s, v, yParity } = parseSignature(signature)
  const vByte = Number(v ?? BigInt(yParity + 27))
  let prepared: PreparedWrite
  try {
    const { request } = await guard(ctx, 'Deposit (permit) simulation', () =>
      simulateContract(ctx.publicClient, {
        account,
        address: ctx.addresses.router,
        abi: routerAbi,
        functionName: 'depositWithPermit',
        args: [amount, wallet, deadline, vByte, r, s, minSharesOut],
      }),
    )
    prepared = await prepareWrite(ctx, account, request, 'Deposit (permit)', checks.blockNumber)
  } catch (error) {
    if (error instanceof VaultError && approvalFixes.has(error.code)) return undefined
    throw error
  }
  return sendPrepared(ctx, walletClient, prepared, 'Deposit (permit)')
}

/** Why a permit deposit can fail where approve-then-deposit works. */
const approvalFixes = new Set<VaultErrorCode>([
  'INSUFFICIENT_ALLOWANCE',
  'INVALID_SIGNATURE',
  'PERMIT_EXPIRED',
])
