/**
 * `sweep` and `previewSweep` on the devnet: the sweep rule against the real router, each
 * reason for depositing nothing, option checks, and the read of the decision in one round trip.
 */
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { depositedIn, receiptsFrom, usdcBalance } from '../../harness/merchant.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc, VaultValidationError } from '../../src/index.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'
import { expectVaultError } from '../support/expectVaultError.js'

let devnet: Devnet
let t: DevnetClients
useDevnet({ chain: 'base-sepolia' }, async (started, clients) => {
  devnet = started
  t = clients
  await t.vault.ensureInitializedAndWait()
})

const merchantBalance = () => usdcBalance(devnet, devnet.accounts.merchant.address)

describe('sweep', () => {
  it('deposits all of the balance above the reserve and says what it did', async () => {
    const balance = await merchantBalance()
    const firstBlock = (await t.publicClient.getBlockNumber({ cacheTime: 0 })) + 1n
    const result = await t.vault.sweep({ minIdleThreshold: '10', reserve: '975.5' })
    expect(result).toEqual({
      wallet: devnet.accounts.merchant.address,
      walletBalance: balance,
      reserveFloor: parseUsdc('975.5'),
      idleAmount: balance - parseUsdc('975.5'),
      minDeposit: parseUsdc('10'),
      deposited: true,
      txHash: expect.stringMatching(/^0x[0-9a-f]{64}$/),
      sharesMinted: expect.any(BigInt),
      blockNumber: expect.any(BigInt),
      method: 'depositWithPermit',
      settlements: [],
    })
    expect(await merchantBalance()).toBe(parseUsdc('975.5'))
    // One transaction: the permit and the deposit together.
    const receipts = await receiptsFrom(devnet, devnet.accounts.merchant.address, firstBlock)
    expect(receipts.map((receipt) => receipt.status)).toEqual(['success'])
    expect(depositedIn(devnet, receipts, devnet.accounts.merchant.address)).toEqual([
      balance - parseUsdc('975.5'),
    ])
    expect(await t.readOnly.getShareBalance({ wallet: devnet.accounts.merchant.address })).toBe(
      result.deposited ? result.sharesMinted : -1n,
    )
  })

  it('takes bigint base units as well as decimal strings, and no reserve means 0', async () => {
    const balance = await merchantBalance()
    const result = await t.vault.sweep({ minIdleThreshold: 0n })
    expect(result).toMatchObject({ deposited: true, idleAmount: balance, reserveFloor: 0n })
    expect(await merchantBalance()).toBe(0n)
  })

  it.each([
    ['below-threshold', { minIdleThreshold: '30', reserve: '975' }],
    ['below-protocol-minimum', { minIdleThreshold: '0', reserve: '995' }],
  ] as const)(
    'deposits nothing, %s, with the balance, reserve and idle amounts',
    async (reason, options) => {
      const balance = await merchantBalance()
      const reserve = parseUsdc(options.reserve)
      expect(await t.vault.sweep(options)).toEqual({
        wallet: devnet.accounts.merchant.address,
        walletBalance: balance,
        reserveFloor: reserve,
        idleAmount: balance - reserve,
        minDeposit: parseUsdc('10'),
        deposited: false,
        reason,
      })
      expect(await merchantBalance()).toBe(balance)
    },
  )

  it('a reserve above the balance leaves 0 idle, and says so (not the protocol minimum)', async () => {
    expect(await t.vault.sweep({ minIdleThreshold: '0', reserve: '5000' })).toMatchObject({
      deposited: false,
      reason: 'reserve-above-balance',
      idleAmount: 0n,
      reserveFloor: parseUsdc('5000'),
    })
  })

  it('deposits nothing while deposits are paused', async () => {
    await t.asDeployer(devnet.addresses.router, 'function pauseDeposits()')
    expect(await t.vault.sweep({ minIdleThreshold: '10' })).toMatchObject({
      deposited: false,
      reason: 'paused',
    })
  })

  it('deposits nothing when the TVL cap has no room for all of the idle USDC', async () => {
    // 500,000 USDC is the cap for the first 31 days.
    await t.asDeployer(devnet.addresses.usdc, 'function mint(address to, uint256 amount)', [
      devnet.accounts.merchant.address,
      parseUsdc('600000'),
    ])
    expect(await t.vault.sweep({ minIdleThreshold: '10' })).toMatchObject({
      deposited: false,
      reason: 'tvl-cap',
      idleAmount: parseUsdc('601000'),
    })
    // Keeping the rest as a reserve fits under the cap.
    expect(await t.vault.sweep({ minIdleThreshold: '10', reserve: '201000' })).toMatchObject({
      deposited: true,
      idleAmount: parseUsdc('400000'),
    })
  })

  it('refuses an unregistered wallet before sending anything', async () => {
    const buyerVault = t.vaultFor(
      t.walletFor(privateKeyToAccount(devnet.accounts.buyer.privateKey)),
    )
    const nonce = await t.publicClient.getTransactionCount({
      address: devnet.accounts.buyer.address,
    })
    await expectVaultError(buyerVault.sweep({ minIdleThreshold: '10' }), 'WALLET_NOT_REGISTERED')
    expect(
      await t.publicClient.getTransactionCount({ address: devnet.accounts.buyer.address }),
    ).toBe(nonce)
  })

  it.each([
    [{ minIdleThreshold: '1,5' }, 'INVALID_AMOUNT', /^minIdleThreshold: Invalid USDC amount "1,5"/],
    [
      { minIdleThreshold: '10', reserve: '-1' },
      'INVALID_AMOUNT',
      /^reserve: .*signs are not allowed/,
    ],
    [{ minIdleThreshold: 10 }, 'INVALID_AMOUNT', /^minIdleThreshold must be a decimal USDC string/],
    [{ minIdleThreshold: -1n }, 'INVALID_AMOUNT', /^minIdleThreshold must be/],
    [{ minIdleThreshold: '1.0000001' }, 'INVALID_AMOUNT', /at most 6 decimals/],
    [{ minIdleThreshold: '10', wallet: '0x1234' }, 'INVALID_ADDRESS', /Invalid address/],
  ])('refuses bad options: %o', async (options, code, message) => {
    const error = await expectVaultError(t.vault.sweep(options as never), code)
    expect(error).toBeInstanceOf(VaultValidationError)
    expect(error.message).toMatch(message)
  })
})

describe('previewSweep', () => {
  it('decides in one RPC round trip and sends nothing; a read-only client works with a wallet', async () => {
    const balance = await merchantBalance()
    const wallet = devnet.accounts.merchant.address
    const { result, requests } = await t.counter.measure(() =>
      t.readOnly.previewSweep({ wallet, minIdleThreshold: '10', reserve: '900' }),
    )
    expect(requests).toBe(1)
    expect(result).toEqual({
      wallet,
      walletBalance: balance,
      reserveFloor: parseUsdc('900'),
      idleAmount: balance - parseUsdc('900'),
      deposit: true,
      minDeposit: parseUsdc('10'),
      registered: true,
    })
    expect(await merchantBalance()).toBe(balance)
    expect(
      await t.readOnly.previewSweep({
        wallet: devnet.accounts.buyer.address,
        minIdleThreshold: '2000',
      }),
    ).toMatchObject({ deposit: false, reason: 'below-threshold', registered: false })
  })

  it('needs a wallet when the client has no account', async () => {
    await expectVaultError(t.readOnly.previewSweep({ minIdleThreshold: '10' }), 'ACCOUNT_REQUIRED')
  })
})
