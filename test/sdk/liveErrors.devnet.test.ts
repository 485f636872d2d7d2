/**
 * Errors as the chain gives them, and withdrawing everything, on the devnet.
 *
 * The devnet's test USDC reverts with the live tokens' reason strings (`ERC20: transfer amount
 * exceeds balance` / `… allowance`); they must give the SDK's INSUFFICIENT_* codes. The Morpho tests use the stand-in vault's `convertToAssets` knob, whose revert no vault
 * ABI knows.
 */
import { simulateContract } from 'viem/actions'
import { beforeEach, describe, expect, it } from 'vitest'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import {
  isUnavailable,
  parseUsdc,
  routerAbi,
  unwrapField,
  type VaultContractError,
} from '../../src/index.js'
import { toVaultError } from '../../src/sdk/errors/toVaultError.js'
import { waitForSuccess } from '../../src/sdk/internal/write.js'
import { buildDepositTransaction } from '../../src/sdk/transactions.js'
import { type DevnetClients, sentTransaction, useDevnet } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'

const knobs = {
  convertReverts: 'function setConvertToAssetsReverts(bool reverts)',
  simulateLoss: 'function simulateLoss(uint256 assets)',
}

let devnet: Devnet
let t: DevnetClients
useDevnet({ chain: 'base-sepolia' }, async (started, clients) => {
  devnet = started
  t = clients
  await t.vault.ensureInitializedAndWait()
})

describe("the USDC's own errors", () => {
  const deposit = (amount: bigint) =>
    simulateContract(t.publicClient, {
      account: t.merchant.address,
      address: devnet.addresses.router,
      abi: routerAbi,
      functionName: 'deposit',
      args: [amount, t.merchant.address, 0n],
    })

  it('in a simulation: INSUFFICIENT_ALLOWANCE, then INSUFFICIENT_USDC', async () => {
    const noAllowance = await deposit(parseUsdc('10')).catch((e) => toVaultError(e))
    expect(noAllowance).toMatchObject({
      code: 'INSUFFICIENT_ALLOWANCE',
      errorName: 'Error',
      args: ['ERC20: transfer amount exceeds allowance'],
    })

    await t.vault.approveUsdcAndWait({ amount: parseUsdc('5000') })
    const noBalance = await deposit(parseUsdc('2000')).catch((e) => toVaultError(e))
    expect(noBalance).toMatchObject({
      code: 'INSUFFICIENT_USDC',
      errorName: 'Error',
      args: ['ERC20: transfer amount exceeds balance'],
    })
  })

  it('in a receipt: TRANSACTION_REVERTED, with the replayed revert decoded', async () => {
    const wallet = t.walletFor(t.merchant)
    const sendDeposit = async (amount: bigint) => {
      // Sent without an estimate, so it lands on chain and reverts there.
      const tx = buildDepositTransaction(t.vault, amount, t.merchant.address, 0n)
      const hash = await wallet.sendTransaction({ to: tx.to, data: tx.data, gas: 500_000n })
      return sentTransaction(t.publicClient, hash)
    }
    const noAllowance = await expectVaultError(
      waitForSuccess(t.vault, await sendDeposit(parseUsdc('10')), 'Deposit'),
      'TRANSACTION_REVERTED',
    )
    expect(noAllowance.details.revertCode).toBe('INSUFFICIENT_ALLOWANCE')
    expect((noAllowance.cause as VaultContractError).code).toBe('INSUFFICIENT_ALLOWANCE')

    await t.vault.approveUsdcAndWait({ amount: parseUsdc('5000') })
    const noBalance = await expectVaultError(
      waitForSuccess(t.vault, await sendDeposit(parseUsdc('2000')), 'Deposit'),
      'TRANSACTION_REVERTED',
    )
    expect(noBalance.details.revertCode).toBe('INSUFFICIENT_USDC')
  })
})

describe('while the Morpho vault does not answer', () => {
  beforeEach(async () => {
    // The devnet routes deposits to Morpho, so the router holds Morpho shares.
    await t.vault.depositAndWait({ amount: parseUsdc('100') })
    await t.asDeployer(devnet.addresses.morphoVault, knobs.convertReverts, [true])
  })

  it('reads report MORPHO_UNREACHABLE per field, still in one round trip', async () => {
    const status = await t.counter.measure(() => t.readOnly.getStatus())
    expect(status.requests).toBe(1)
    expect(status.result.withdrawCapacity.morphoReachable).toBe(false)
    for (const field of [status.result.totalAssets, status.result.pricePerShare]) {
      expect(isUnavailable(field) && field.code).toBe('MORPHO_UNREACHABLE')
      expect(isUnavailable(field) && field.reason).toMatch(/Morpho venue can't be valued right now/)
    }

    const position = await t.counter.measure(() =>
      t.readOnly.getPosition({ wallet: t.merchant.address }),
    )
    expect(position.requests).toBe(1)
    const { currentValue, withdrawableUsdc, shares } = position.result
    expect(isUnavailable(currentValue) && currentValue.code).toBe('MORPHO_UNREACHABLE')
    expect(isUnavailable(withdrawableUsdc) && withdrawableUsdc.code).toBe('MORPHO_UNREACHABLE')
    expect(unwrapField(shares)).toBeGreaterThan(0n)

    // The oracle's views read the Morpho share price with no try, as the live oracle does: its revert takes
    // down every rate and the selection, each reported as MORPHO_UNREACHABLE; freshness still answers.
    const yields = await t.counter.measure(() => t.readOnly.getYield())
    expect(yields.requests).toBe(1)
    const { aave, morpho, optimal } = yields.result
    for (const field of [optimal, aave.spotRay, morpho.spotRay, morpho.twarRay, morpho.safe]) {
      expect(isUnavailable(field) && field.code).toBe('MORPHO_UNREACHABLE')
    }
    expect(yields.result.oracleFresh).toBe(true)
  })

  it('plans and writes refuse with MORPHO_UNREACHABLE in their usual round trips', async () => {
    const wallet = t.merchant.address
    const depositPlan = await t.counter.measure(() =>
      t.readOnly.planDeposit({ wallet, amount: parseUsdc('10') }).catch((e) => e),
    )
    expect(depositPlan.result).toMatchObject({ code: 'MORPHO_UNREACHABLE', retryable: true })
    // The read and the simulation, sent at once (one request on a batching transport).
    expect(depositPlan.requests).toBe(2)

    const withdrawPlan = await t.counter.measure(() =>
      t.readOnly.planWithdraw({ wallet, amount: parseUsdc('10') }).catch((e) => e),
    )
    expect(withdrawPlan.result).toMatchObject({ code: 'MORPHO_UNREACHABLE' })
    expect(withdrawPlan.requests).toBeLessThanOrEqual(2)

    const nonce = await t.publicClient.getTransactionCount({ address: wallet })
    await expectVaultError(
      t.vault.depositAndWait({ amount: parseUsdc('10') }),
      'MORPHO_UNREACHABLE',
    )
    await expectVaultError(t.vault.withdrawAndWait({ shares: 1_000_000n }), 'MORPHO_UNREACHABLE')
    expect(await t.publicClient.getTransactionCount({ address: wallet })).toBe(nonce)
  })
})

describe('withdrawing everything by amount', () => {
  /** Plans and withdraws `getPosition().withdrawableUsdc` by USDC amount. */
  async function withdrawAll() {
    const wallet = t.merchant.address
    const position = await t.readOnly.getPosition({ wallet })
    const amount = unwrapField(position.withdrawableUsdc)
    const shares = unwrapField(position.shares)

    const plan = await t.counter.measure(() => t.readOnly.planWithdraw({ wallet, amount }))
    expect(plan.requests).toBeLessThanOrEqual(2)
    expect(plan.result.shares).toBeLessThanOrEqual(shares)
    expect(plan.result.minUsdcOut).toBeGreaterThanOrEqual(amount)
    expect(plan.result.simulatedUsdcOut).toBeGreaterThanOrEqual(amount)

    const result = await t.vault.withdrawAndWait({ amount })
    expect(result.usdcReturned).toBeGreaterThanOrEqual(amount)
    return { amount, result }
  }

  it('with a profit', async () => {
    await t.vault.depositAndWait({ amount: parseUsdc('100') })
    await devnet.advanceTime(30 * 24 * 3600)
    const { amount, result } = await withdrawAll()
    expect(amount).toBeGreaterThan(parseUsdc('100'))
    expect(result.feePaid).toBeGreaterThan(0n)
  })

  it('with a loss', async () => {
    await t.vault.depositAndWait({ amount: parseUsdc('100') })
    await t.asDeployer(devnet.addresses.morphoVault, knobs.simulateLoss, [parseUsdc('7')])
    const { amount, result } = await withdrawAll()
    expect(amount).toBeLessThan(parseUsdc('100'))
    expect(result.feePaid).toBe(0n)
  })
})
