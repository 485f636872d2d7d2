/**
 * The built SDK (dist/index.js, with viem bundled in) driven by clients from the caller's own viem, as
 * a user's app does it: the two viems are different copies, so nothing may depend on `instanceof`
 * across them. Runs after `npm run build` (as `npm test` does).
 */
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import { createPublicClient, createWalletClient, http } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'

type Sdk = typeof import('../../src/index.js')

const entry = join(import.meta.dirname, '../../dist/index.js')
let sdk: Sdk
let devnet: Devnet

beforeAll(async () => {
  expect(existsSync(entry), 'dist/index.js is missing: run `npm run build`').toBe(true)
  sdk = (await import(pathToFileURL(entry).href)) as Sdk
  devnet = await startDevnet({ chain: 'base-sepolia' })
})
afterAll(async () => {
  await devnet?.stop()
})

/** A vault client from the built SDK over the caller's viem clients. */
function builtVault(rpcUrl = devnet.rpcUrl) {
  const transport = http(rpcUrl, { retryCount: 0 })
  return sdk.createVaultClient({
    publicClient: createPublicClient({ chain: devnet.viemChain, transport, pollingInterval: 50 }),
    walletClient: createWalletClient({
      account: privateKeyToAccount(devnet.accounts.merchant.privateKey),
      chain: devnet.viemChain,
      transport,
      pollingInterval: 50,
    }),
    chain: 'base-sepolia',
    addresses: devnet.addresses,
  })
}

describe('the built SDK with the caller’s viem', () => {
  it('verifies, reads, registers, deposits and withdraws', async () => {
    const vault = builtVault()
    await vault.verifyAddresses()
    expect((await vault.getStatus()).shareSymbol).toBe('dvUSDC')
    await vault.ensureInitializedAndWait()
    const deposit = await vault.depositAndWait({ amount: sdk.parseUsdc('20') })
    expect(deposit.method).toBe('depositWithPermit')
    const withdrawal = await vault.withdrawAndWait({ amount: sdk.parseUsdc('5') })
    expect(withdrawal.usdcReturned).toBeGreaterThanOrEqual(sdk.parseUsdc('5'))
  })

  it('decodes a revert and classifies an RPC failure thrown by the other viem', async () => {
    const vault = builtVault()
    const expected = await vault.previewDeposit({ amount: sdk.parseUsdc('10') })
    const slippage = await vault
      .deposit({ amount: sdk.parseUsdc('10'), minSharesOut: expected * 2n, permit: 'never' })
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    expect(slippage).toBeInstanceOf(sdk.VaultError)
    expect(slippage).toMatchObject({ code: 'SLIPPAGE_EXCEEDED' })

    const down = await builtVault('http://127.0.0.1:9/v2/SECRETKEY')
      .getStatus()
      .then(
        () => undefined,
        (error: unknown) => error,
      )
    expect(down).toMatchObject({ code: 'RPC_UNREACHABLE', retryable: true })
    expect((down as Error).message).not.toContain('SECRETKEY')
  })
})
