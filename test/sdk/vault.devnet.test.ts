import { getAddress, zeroAddress } from 'viem'
import { describe, expect, it } from 'vitest'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import {
  AddressMismatchError,
  isUnavailable,
  parseUsdc,
  routerAbi,
  shareTokenAbi,
  unwrapField,
  type VaultChainName,
  VaultContractError,
  VaultPreconditionError,
  vaultChains,
} from '../../src/index.js'
import { type DevnetClients, sentTransaction, useDevnet } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'

const knobs = {
  convertReverts: 'function setConvertToAssetsReverts(bool reverts)',
  pause: 'function pauseDeposits()',
  mint: 'function mint(address to, uint256 amount)',
}

describe.each(['base-sepolia', 'base'] as const)(
  'vault SDK on the devnet (%s)',
  (chainName: VaultChainName) => {
    let devnet: Devnet
    let t: DevnetClients
    useDevnet({ chain: chainName }, async (started, clients) => {
      devnet = started
      t = clients
    })

    /** Registers the merchant and deposits `usdc` through the SDK. */
    async function registerAndDeposit(usdc: string) {
      await t.vault.ensureInitializedAndWait()
      return t.vault.depositAndWait({ amount: parseUsdc(usdc) })
    }

    describe('client and verification', () => {
      it('exposes chain, chainId, network and addresses', () => {
        const id = vaultChains[chainName].chainId
        expect(t.vault.chain).toBe(chainName)
        expect(t.vault.chainId).toBe(id)
        expect(t.vault.network).toBe(`eip155:${id}`)
        expect(t.vault.addresses.router).toBe(getAddress(devnet.addresses.router))
      })

      it('verifyAddresses passes in at most 2 requests', async () => {
        const { result, requests, methods } = await t.counter.measure(() =>
          t.vault.verifyAddresses(),
        )
        expect(requests).toBeLessThanOrEqual(2)
        expect(methods.sort()).toEqual(['eth_call', 'eth_chainId'])
        expect(result.chainId).toBe(vaultChains[chainName].chainId)
        expect(result.checks).toContain('router.ORACLE()')
        expect(result.checks).toContain('shareToken.VAULT_ROUTER()')
        expect(result.checks).toContain('feeCollector.VAULT_ROUTER()')
      })

      it('names the field, expected and actual value on a wiring mismatch', async () => {
        const wrong = t.vaultFor(undefined, { oracle: devnet.addresses.feeCollector })
        const error = await expectVaultError(wrong.verifyAddresses(), 'ADDRESS_MISMATCH')
        expect(error).toBeInstanceOf(AddressMismatchError)
        const mismatch = error as AddressMismatchError
        expect(mismatch.field).toBe('router.ORACLE()')
        expect(mismatch.expected).toBe(getAddress(devnet.addresses.feeCollector))
        expect(mismatch.actual).toBe(getAddress(devnet.addresses.oracle))
        expect(mismatch.message).toContain('router.ORACLE()')
      })

      it('reports an address without code', async () => {
        const empty = '0x00000000000000000000000000000000000000aa'
        const wrong = t.vaultFor(undefined, { morphoVault: empty })
        const error = await expectVaultError(wrong.verifyAddresses(), 'NO_CONTRACT_CODE')
        expect((error as AddressMismatchError).field).toBe('morphoVault code')
      })

      it('reports the RPC being on another chain', async () => {
        const other: VaultChainName = chainName === 'base' ? 'base-sepolia' : 'base'
        const { createVaultClient } = await import('../../src/index.js')
        const { createPublicClient, http } = await import('viem')
        const client = createVaultClient({
          publicClient: createPublicClient({ transport: http(devnet.rpcUrl) }),
          chain: other,
          addresses: devnet.addresses,
        })
        const error = await expectVaultError(client.verifyAddresses(), 'CHAIN_MISMATCH')
        expect((error as AddressMismatchError).field).toBe('chainId')
        expect((error as AddressMismatchError).expected).toBe(String(vaultChains[other].chainId))
      })
    })

    describe('reads: one round trip each', () => {
      it('getStatus', async () => {
        const { result, requests } = await t.counter.measure(() => t.readOnly.getStatus())
        expect(requests).toBe(1)
        expect(result.depositsPaused).toBe(false)
        expect(result.minDeposit).toBe(10_000_000n)
        expect(result.tvlCap).toBe(500_000_000_000n)
        expect(result.tvlHeadroom).toBe(500_000_000_000n)
        expect(result.totalAssets).toBe(0n)
        expect(result.pricePerShare).toBe(10n ** 18n)
        expect(result.shareSymbol).toBe('dvUSDC')
        expect(result.oracle.fresh).toBe(true)
        expect(result.oracle.maxStalenessSeconds).toBe(7200n)
        expect(result.treasury.pending).toBeNull()
        expect(result.withdrawCapacity.morphoReachable).toBe(true)
        expect(result.blockNumber).toBeGreaterThan(
          BigInt(vaultChains[chainName].viemChain.contracts?.multicall3?.blockCreated ?? 0),
        )
      })

      it('getYield', async () => {
        const { result, requests } = await t.counter.measure(() => t.readOnly.getYield())
        expect(requests).toBe(1)
        expect(result.aave.spotApy).toBe('3.50%')
        expect(result.morpho.twarApy).toBe('4.50%')
        expect(result.aave.safe).toBe(true)
        expect(unwrapField(result.optimal).venue).toBe('morpho')
        expect(result.oracleFresh).toBe(true)
      })

      it('getPosition, and after a deposit and time, yield', async () => {
        const before = await t.counter.measure(() =>
          t.readOnly.getPosition({ wallet: t.merchant.address }),
        )
        expect(before.requests).toBe(1)
        expect(before.result.registered).toBe(false)
        expect(before.result.liquidUsdc).toBe(parseUsdc('1000'))
        expect(before.result.shares).toBe(0n)

        await registerAndDeposit('200')
        await devnet.advanceTime(30 * 24 * 3600)
        const after = await t.counter.measure(() =>
          t.readOnly.getPosition({ wallet: t.merchant.address }),
        )
        expect(after.requests).toBe(1)
        expect(after.result.registered).toBe(true)
        expect(after.result.liquidUsdc).toBe(parseUsdc('800'))
        expect(after.result.deposited).toBe(parseUsdc('200'))
        expect(unwrapField(after.result.currentValue)).toBeGreaterThan(parseUsdc('200'))
        expect(unwrapField(after.result.accruedYield)).toBeGreaterThan(0n)
        // withdrawableUsdc is the router's previewRedeem of every share, at the same block.
        const shares = unwrapField(after.result.shares)
        const preview = await t.publicClient.readContract({
          address: devnet.addresses.router,
          abi: routerAbi,
          functionName: 'previewRedeem',
          args: [shares, t.merchant.address],
          blockNumber: after.result.blockNumber,
        })
        expect(after.result.withdrawableUsdc).toBe(preview)
        expect(unwrapField(after.result.withdrawableUsdc)).toBeLessThan(
          unwrapField(after.result.currentValue),
        )
      })

      it('lower-level reads', async () => {
        await registerAndDeposit('100')
        const wallet = t.merchant.address
        expect(await t.readOnly.getMinDeposit()).toBe(10_000_000n)
        expect(await t.readOnly.getUsdcBalance({ wallet })).toBe(parseUsdc('900'))
        expect(await t.readOnly.getUsdcAllowance({ wallet })).toBe(0n)
        expect(await t.readOnly.getShareBalance({ wallet })).toBe(parseUsdc('100'))
        expect(await t.readOnly.isRegistered({ wallet })).toBe(true)
        // Interest accrues with block time, so a second between blocks moves the price a little.
        const near = (value: bigint, target: bigint) => {
          expect(value).toBeGreaterThanOrEqual((target * 999n) / 1000n)
          expect(value).toBeLessThanOrEqual((target * 1001n) / 1000n)
        }
        near(await t.readOnly.previewDeposit({ amount: parseUsdc('10') }), parseUsdc('10'))
        near(await t.readOnly.previewRedeem({ shares: parseUsdc('10'), wallet }), parseUsdc('10'))
        near(
          await t.readOnly.previewWithdrawNet({ amount: parseUsdc('10'), wallet }),
          parseUsdc('10'),
        )
      })

      it('reports a reverting Morpho view per field and still answers', async () => {
        await registerAndDeposit('100')
        await t.asDeployer(devnet.addresses.morphoVault, knobs.convertReverts, [true])

        const status = await t.counter.measure(() => t.readOnly.getStatus())
        expect(status.requests).toBe(1)
        const s = status.result
        expect(isUnavailable(s.totalAssets)).toBe(true)
        expect(isUnavailable(s.pricePerShare)).toBe(true)
        if (isUnavailable(s.totalAssets)) expect(s.totalAssets.reason.length).toBeGreaterThan(5)
        expect(isUnavailable(s.tvlHeadroom)).toBe(true)
        expect(s.depositsPaused).toBe(false)
        expect(s.minDeposit).toBe(10_000_000n)
        expect(s.withdrawCapacity.morphoReachable).toBe(false)
        expect(s.shareSymbol).toBe('dvUSDC')

        const position = await t.counter.measure(() =>
          t.readOnly.getPosition({ wallet: t.merchant.address }),
        )
        expect(position.requests).toBe(1)
        expect(isUnavailable(position.result.currentValue)).toBe(true)
        expect(isUnavailable(position.result.accruedYield)).toBe(true)
        expect(isUnavailable(position.result.withdrawableUsdc)).toBe(true)
        expect(position.result.shares).toBe(parseUsdc('100'))
        expect(position.result.liquidUsdc).toBe(parseUsdc('900'))
        expect(() => unwrapField(position.result.currentValue, 'currentValue')).toThrow(
          /currentValue is unavailable/,
        )
      })
    })

    describe('plans: no wallet client, at most two round trips', () => {
      it('planApproveUsdc and planInitialize', async () => {
        const approve = await t.counter.measure(() =>
          t.readOnly.planApproveUsdc({ wallet: t.buyer.address, amount: parseUsdc('25') }),
        )
        expect(approve.requests).toBe(1)
        expect(approve.result.transaction).toMatchObject({
          chain: chainName,
          chainId: vaultChains[chainName].chainId,
          to: getAddress(devnet.addresses.usdc),
          value: 0n,
          functionName: 'approve',
          args: [getAddress(devnet.addresses.router), parseUsdc('25')],
        })
        expect(approve.result.currentAllowance).toBe(0n)

        const init = await t.counter.measure(() =>
          t.readOnly.planInitialize({ wallet: t.buyer.address }),
        )
        expect(init.requests).toBe(1)
        expect(init.result.alreadyRegistered).toBe(false)
        expect(init.result.transaction.functionName).toBe('initialize')
        expect((await t.send(t.buyer, init.result.transaction)).status).toBe('success')
        expect(
          (await t.readOnly.planInitialize({ wallet: t.buyer.address })).alreadyRegistered,
        ).toBe(true)
      })

      it('planDeposit reports registration and approval, then simulates, and the plan executes', async () => {
        const amount = parseUsdc('50')
        const first = await t.counter.measure(() =>
          t.readOnly.planDeposit({ wallet: t.buyer.address, amount }),
        )
        // The multicall and the eth_simulateV1 of all three steps, sent at once: this transport does
        // not batch (a batching one, as the MCP server's, sends them in one request).
        expect(first.requests).toBe(2)
        const plan = first.result
        expect(plan.needsRegistration).toBe(true)
        expect(plan.initializeTransaction?.functionName).toBe('initialize')
        expect(plan.needsApproval).toBe(true)
        expect(plan.allowance).toBe(0n)
        expect(plan.shortfall).toBe(amount)
        expect(plan.simulated).toBe(true)
        expect(plan.simulatedShares).toBe(plan.expectedShares)
        expect(plan.calls.calls.map((call) => call.to)).toEqual(plan.steps.map((step) => step.to))
        expect(plan.minSharesOut).toBe((plan.expectedShares * 9990n) / 10000n)
        expect(plan.transaction).toMatchObject({
          functionName: 'deposit',
          args: [amount, t.buyer.address, plan.minSharesOut],
          value: 0n,
        })

        // follow the plan from the buyer's own wallet
        expect((await t.send(t.buyer, plan.initializeTransaction as never)).status).toBe('success')
        expect((await t.send(t.buyer, plan.approveTransaction as never)).status).toBe('success')

        const second = await t.counter.measure(() =>
          t.readOnly.planDeposit({ wallet: t.buyer.address, amount, slippageBps: 0 }),
        )
        expect(second.requests).toBeLessThanOrEqual(2)
        expect(second.result.needsApproval).toBe(false)
        expect(second.result.needsRegistration).toBe(false)
        expect(second.result.simulated).toBe(true)
        expect(second.result.simulatedShares).toBe(second.result.expectedShares)
        expect((await t.send(t.buyer, second.result.transaction)).status).toBe('success')
        expect(await t.readOnly.getShareBalance({ wallet: t.buyer.address })).toBe(
          second.result.expectedShares,
        )
      })

      it('planDeposit refuses what cannot succeed', async () => {
        const wallet = t.merchant.address
        await expectVaultError(
          t.readOnly.planDeposit({ wallet, amount: parseUsdc('9.999999') }),
          'BELOW_MIN_DEPOSIT',
        )
        await expectVaultError(
          t.readOnly.planDeposit({ wallet, amount: parseUsdc('1000.000001') }),
          'INSUFFICIENT_USDC',
        )
        for (const slippageBps of [-1, 1001, 1.5, Number.NaN]) {
          await expectVaultError(
            t.readOnly.planDeposit({ wallet, amount: parseUsdc('10'), slippageBps }),
            'INVALID_SLIPPAGE',
          )
        }
        await expectVaultError(
          t.readOnly.planDeposit({ wallet: zeroAddress, amount: parseUsdc('10') }),
          'INVALID_ADDRESS',
        )
        await expectVaultError(t.readOnly.planDeposit({ wallet, amount: 0n }), 'INVALID_AMOUNT')
        expect(
          (await t.readOnly.planDeposit({ wallet, amount: parseUsdc('10'), slippageBps: 1000 }))
            .slippageBps,
        ).toBe(1000)
      })

      it('planDeposit and deposit refuse while deposits are paused', async () => {
        await t.vault.ensureInitializedAndWait()
        await t.asDeployer(devnet.addresses.router, knobs.pause)
        const error = await expectVaultError(
          t.readOnly.planDeposit({ wallet: t.merchant.address, amount: parseUsdc('10') }),
          'DEPOSITS_PAUSED',
        )
        expect(error).toBeInstanceOf(VaultPreconditionError)
        await expectVaultError(
          t.vault.depositAndWait({ amount: parseUsdc('10') }),
          'DEPOSITS_PAUSED',
        )
        expect((await t.readOnly.getStatus()).depositsPaused).toBe(true)
      })

      it('planDeposit refuses a deposit above the TVL headroom', async () => {
        await t.asDeployer(devnet.addresses.usdc, knobs.mint, [
          t.buyer.address,
          parseUsdc('600000'),
        ])
        const error = await expectVaultError(
          t.readOnly.planDeposit({ wallet: t.buyer.address, amount: parseUsdc('500000.000001') }),
          'TVL_CAP_EXCEEDED',
        )
        expect(error.details.tvlCap).toBe(parseUsdc('500000'))
        expect(error.message).toContain('500000 USDC')
      })

      it('planWithdraw by amount guarantees at least the amount; by shares applies slippage', async () => {
        await registerAndDeposit('100')
        await devnet.advanceTime(10 * 24 * 3600)
        const wallet = t.merchant.address
        const amount = parseUsdc('40')
        const byAmount = await t.counter.measure(() => t.readOnly.planWithdraw({ wallet, amount }))
        expect(byAmount.requests).toBeLessThanOrEqual(2)
        expect(byAmount.result.minUsdcOut).toBeGreaterThanOrEqual(amount)
        expect(byAmount.result.simulatedUsdcOut).toBeGreaterThanOrEqual(amount)
        expect(byAmount.result.transaction).toMatchObject({
          functionName: 'withdraw',
          args: [byAmount.result.shares, wallet, byAmount.result.minUsdcOut],
        })
        const balanceBefore = await t.readOnly.getUsdcBalance({ wallet })
        expect((await t.send(t.merchant, byAmount.result.transaction)).status).toBe('success')
        expect(
          (await t.readOnly.getUsdcBalance({ wallet })) - balanceBefore,
        ).toBeGreaterThanOrEqual(amount)

        const shares = parseUsdc('10')
        const byShares = await t.counter.measure(() =>
          t.readOnly.planWithdraw({ wallet, shares, slippageBps: 100 }),
        )
        expect(byShares.requests).toBeLessThanOrEqual(2)
        expect(byShares.result.slippageBps).toBe(100)
        expect(byShares.result.minUsdcOut).toBe((byShares.result.expectedUsdcOut * 9900n) / 10000n)
        expect(byShares.result.shares).toBe(shares)
      })

      it('planWithdraw refuses what cannot succeed', async () => {
        const wallet = t.merchant.address
        await expectVaultError(
          t.readOnly.planWithdraw({ wallet, amount: parseUsdc('1') }),
          'WALLET_NOT_REGISTERED',
        )
        await registerAndDeposit('20')
        await expectVaultError(
          t.readOnly.planWithdraw({ wallet, shares: parseUsdc('21') }),
          'INSUFFICIENT_SHARES',
        )
        const unserviceable = await expectVaultError(
          t.readOnly.planWithdraw({ wallet, amount: parseUsdc('25') }),
          'UNSERVICEABLE_AMOUNT',
        )
        expect(unserviceable).toBeInstanceOf(VaultContractError)
        expect((unserviceable as VaultContractError).errorName).toBe('UnserviceableNet')
        expect((unserviceable as VaultContractError).args[0]).toBe(parseUsdc('25'))
        await expectVaultError(
          t.readOnly.planWithdraw({ wallet, amount: 1n, shares: 1n } as never),
          'INVALID_ARGUMENT',
        )
        await expectVaultError(t.readOnly.planWithdraw({ wallet } as never), 'INVALID_ARGUMENT')
      })
    })

    describe('writes', () => {
      it('ensureInitializedAndWait is idempotent and refuses another wallet', async () => {
        const first = await t.vault.ensureInitializedAndWait({ wallet: t.merchant.address })
        expect(first.alreadyRegistered).toBe(false)
        expect(first.txHash).toMatch(/^0x[0-9a-f]{64}$/)
        const again = await t.vault.ensureInitializedAndWait({ wallet: t.merchant.address })
        expect(again).toEqual({ wallet: t.merchant.address, alreadyRegistered: true, txHash: null })
        const error = await expectVaultError(
          t.vault.ensureInitializedAndWait({ wallet: t.buyer.address }),
          'WALLET_NOT_REGISTERED',
        )
        expect(error.message).toContain(t.buyer.address)
        await expectVaultError(t.vault.initialize(), 'WALLET_ALREADY_REGISTERED')
      })

      it('refuses a deposit from an unregistered wallet before sending anything', async () => {
        const nonce = await t.publicClient.getTransactionCount({ address: t.merchant.address })
        const error = await expectVaultError(
          t.vault.depositAndWait({ amount: parseUsdc('10') }),
          'WALLET_NOT_REGISTERED',
        )
        expect(error.message).toMatch(/ensureInitializedAndWait/)
        expect(await t.publicClient.getTransactionCount({ address: t.merchant.address })).toBe(
          nonce,
        )
      })

      it('refuses a deposit below the minimum before sending anything', async () => {
        await t.vault.ensureInitializedAndWait()
        const nonce = await t.publicClient.getTransactionCount({ address: t.merchant.address })
        const error = await expectVaultError(
          t.vault.deposit({ amount: parseUsdc('5') }),
          'BELOW_MIN_DEPOSIT',
        )
        expect(error.message).toContain('10 USDC')
        expect(await t.publicClient.getTransactionCount({ address: t.merchant.address })).toBe(
          nonce,
        )
      })

      it('deposits with an EIP-2612 permit in one transaction', async () => {
        await t.vault.ensureInitializedAndWait()
        const expected = await t.readOnly.previewDeposit({ amount: parseUsdc('100') })
        const result = await t.vault.depositAndWait({ amount: parseUsdc('100') })
        expect(result.method).toBe('depositWithPermit')
        expect(result.approvalTxHash).toBeUndefined()
        expect(result.sharesMinted).toBe(expected)
        expect(result.usdcAmount).toBe(parseUsdc('100'))
        expect(result.txHash).toMatch(/^0x[0-9a-f]{64}$/)
        expect(await t.readOnly.getShareBalance({ wallet: t.merchant.address })).toBe(
          result.sharesMinted,
        )
      })

      it('falls back to approve then deposit, and uses an existing allowance', async () => {
        await t.vault.ensureInitializedAndWait()
        const viaApprove = await t.vault.depositAndWait({
          amount: parseUsdc('30'),
          permit: 'never',
        })
        expect(viaApprove.method).toBe('deposit')
        expect(viaApprove.approvalTxHash).toMatch(/^0x[0-9a-f]{64}$/)

        await t.vault.approveUsdcAndWait({ amount: parseUsdc('20') })
        const withAllowance = await t.vault.depositAndWait({ amount: parseUsdc('20') })
        expect(withAllowance.method).toBe('deposit')
        expect(withAllowance.approvalTxHash).toBeUndefined()
        expect(await t.readOnly.getShareBalance({ wallet: t.merchant.address })).toBe(
          viaApprove.sharesMinted + withAllowance.sharesMinted,
        )
      })

      it('refuses when the minimum shares cannot be met (slippage exceeded)', async () => {
        await t.vault.ensureInitializedAndWait()
        await t.vault.approveUsdcAndWait({ amount: parseUsdc('10') })
        const expected = await t.readOnly.previewDeposit({ amount: parseUsdc('10') })
        const error = await expectVaultError(
          t.vault.deposit({ amount: parseUsdc('10'), minSharesOut: expected + 1n }),
          'SLIPPAGE_EXCEEDED',
        )
        expect(error).toBeInstanceOf(VaultContractError)
        expect((error as VaultContractError).errorName).toBe('SlippageExceeded')
        expect((error as VaultContractError).args).toEqual([expected, expected + 1n])
        expect((error as VaultContractError).contract).toBe('router')
      })

      it('withdraws by amount and by shares, parsing the Withdrawn log', async () => {
        await registerAndDeposit('100')
        await devnet.advanceTime(60 * 24 * 3600)
        const byAmount = await t.vault.withdrawAndWait({ amount: parseUsdc('30') })
        expect(byAmount.usdcReturned).toBeGreaterThanOrEqual(parseUsdc('30'))
        expect(byAmount.sharesBurned).toBeLessThan(parseUsdc('30'))
        expect(byAmount.feePaid).toBeGreaterThan(0n)

        const shares = await t.readOnly.getShareBalance({ wallet: t.merchant.address })
        const all = await t.vault.withdrawAndWait({ shares })
        expect(all.sharesBurned).toBe(shares)
        expect(all.usdcReturned).toBeGreaterThan(parseUsdc('70'))
        expect(await t.readOnly.getShareBalance({ wallet: t.merchant.address })).toBe(0n)
      })

      it('refuses withdrawals that would fail', async () => {
        await registerAndDeposit('20')
        await expectVaultError(
          t.vault.withdraw({ shares: parseUsdc('20.000001') }),
          'INSUFFICIENT_SHARES',
        )
        const slippage = await expectVaultError(
          t.vault.withdraw({ shares: parseUsdc('10'), minUsdcOut: parseUsdc('11') }),
          'SLIPPAGE_EXCEEDED',
        )
        expect((slippage as VaultContractError).errorName).toBe('SlippageExceeded')
        await expectVaultError(
          t.vault.withdraw({ amount: parseUsdc('10'), minUsdcOut: parseUsdc('9') }),
          'INVALID_AMOUNT',
        )
        await expectVaultError(
          t.vault.withdraw({ amount: parseUsdc('21') }),
          'UNSERVICEABLE_AMOUNT',
        )
      })

      it('explains a transaction that reverted on chain', async () => {
        const { waitForSuccess } = await import('../../src/sdk/internal/write.js')
        const { VaultTransactionError } = await import('../../src/index.js')
        const { buildDepositTransaction } = await import('../../src/sdk/transactions.js')
        await t.vault.ensureInitializedAndWait()
        const wallet = t.walletFor(t.merchant)
        // Sent without an estimate, so it lands on chain and reverts there.
        const tx = buildDepositTransaction(t.vault, parseUsdc('1'), t.merchant.address, 0n)
        const reverted = await wallet.sendTransaction({ to: tx.to, data: tx.data, gas: 300_000n })
        const error = await expectVaultError(
          waitForSuccess(t.vault, await sentTransaction(t.publicClient, reverted), 'Deposit'),
          'TRANSACTION_REVERTED',
        )
        expect(error).toBeInstanceOf(VaultTransactionError)
        expect(error.details.errorName).toBe('InvalidAmount')
        expect(error.message).toContain('minimum deposit')
        expect(error.details.txHash).toBe(reverted)

        const starved = await wallet.sendTransaction({ to: tx.to, data: tx.data, gas: 25_000n })
        const oog = await expectVaultError(
          waitForSuccess(t.vault, await sentTransaction(t.publicClient, starved), 'Deposit'),
          'TRANSACTION_REVERTED',
        )
        expect(oog.message).toContain('ran out of gas')
      })

      it('a read-only client refuses writes clearly', async () => {
        await expectVaultError(
          t.readOnly.depositAndWait({ amount: parseUsdc('10') }),
          'WALLET_CLIENT_REQUIRED',
        )
        await expectVaultError(t.readOnly.initialize(), 'WALLET_CLIENT_REQUIRED')
      })

      it('the share token cannot be transferred (decoded NonTransferable)', async () => {
        await registerAndDeposit('10')
        const { simulateContract } = await import('viem/actions')
        const { toVaultError } = await import('../../src/sdk/errors/toVaultError.js')
        try {
          await simulateContract(t.publicClient, {
            account: t.merchant.address,
            address: devnet.addresses.shareToken,
            abi: shareTokenAbi,
            functionName: 'transfer',
            args: [t.buyer.address, 1n],
          })
          throw new Error('transfer should revert')
        } catch (error) {
          expect(toVaultError(error).code).toBe('NON_TRANSFERABLE')
        }
      })
    })
  },
)
