import { createPublicClient, http } from 'viem'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { type Devnet, startDevnet } from '../../../src/devnet/startDevnet.js'
import {
  createVaultClient,
  readX402UsdcAsset,
  VaultConfigError,
  vaultChains,
} from '../../../src/index.js'

/** Each devnet's vault USDC sits at its live address and is read as the live token would be. */
const chains = [
  {
    chain: 'base',
    expected: { name: 'USD Coin', version: '2', assetTransferMethod: 'eip3009' },
  },
  {
    // Aave's test USDC: no version() and no EIP-3009; its DOMAIN_SEPARATOR() says version "1".
    chain: 'base-sepolia',
    expected: { name: 'USDC', version: '1', assetTransferMethod: 'permit2' },
  },
] as const

describe.each(chains)('readX402UsdcAsset on the $chain devnet', ({ chain, expected }) => {
  let devnet: Devnet
  const vaultWithUsdc = (usdc?: `0x${string}`) =>
    createVaultClient({
      publicClient: createPublicClient({ chain: devnet.viemChain, transport: http(devnet.rpcUrl) }),
      chain: devnet.chain,
      addresses: { ...devnet.addresses, ...(usdc ? { usdc } : {}) },
    })

  beforeAll(async () => {
    devnet = await startDevnet({ chain })
  })
  afterAll(async () => {
    await devnet?.stop()
  })

  it(`reads the vault's USDC as ${expected.assetTransferMethod} "${expected.name}" version "${expected.version}"`, async () => {
    expect(await readX402UsdcAsset(vaultWithUsdc())).toEqual({
      address: vaultChains[chain].addresses.usdc,
      ...expected,
    })
  })

  it('falls back to Permit2, without a domain, for a token with no EIP-3009 and no EIP-712 domain', async () => {
    // The aToken is an ERC-20 with name() but neither version(), DOMAIN_SEPARATOR() nor authorizationState().
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
