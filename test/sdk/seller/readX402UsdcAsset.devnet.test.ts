import { createPublicClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../../../src/devnet/startDevnet.js'
import { createVaultClient, readX402UsdcAsset, VaultConfigError } from '../../../src/index.js'

describe('readX402UsdcAsset (devnet)', () => {
  let devnet: Devnet
  const vaultWithUsdc = (usdc?: `0x${string}`) =>
    createVaultClient({
      publicClient: createPublicClient({ chain: devnet.viemChain, transport: http(devnet.rpcUrl) }),
      chain: devnet.chain,
      addresses: { ...devnet.addresses, ...(usdc ? { usdc } : {}) },
    })

  beforeAll(async () => {
    devnet = await startDevnet()
  })
  afterAll(async () => {
    await devnet?.stop()
  })

  it("reads the devnet test USDC as EIP-3009 'USD Coin' version '2'", async () => {
    expect(await readX402UsdcAsset(vaultWithUsdc())).toEqual({
      address: vaultWithUsdc().addresses.usdc,
      name: 'USD Coin',
      version: '2',
      assetTransferMethod: 'eip3009',
    })
  })

  it('falls back to Permit2, without a domain, for a token with no EIP-3009 and no version()', async () => {
    // The aToken is an ERC-20 with name() but neither version() nor authorizationState().
    const vault = vaultWithUsdc(devnet.addresses.aToken)
    expect(await readX402UsdcAsset(vault)).toEqual({
      address: vault.addresses.usdc,
      assetTransferMethod: 'permit2',
    })
  })

  it('says when the configured USDC is not a token at all', async () => {
    const vault = vaultWithUsdc('0x000000000000000000000000000000000000dEaD')
    await expect(readX402UsdcAsset(vault)).rejects.toBeInstanceOf(VaultConfigError)
    await expect(readX402UsdcAsset(vault)).rejects.toMatchObject({ code: 'NO_CONTRACT_CODE' })
  })
})
