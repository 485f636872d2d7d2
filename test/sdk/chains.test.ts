import { base, baseSepolia } from 'viem/chains'
import { describe, expect, it } from 'vitest'
import { vaultChains } from '../../src/index.js'

describe("the SDK's own chain definitions", () => {
  it.each([
    ['base', base],
    ['base-sepolia', baseSepolia],
  ] as const)("%s has viem's facts", (name, viemChain) => {
    const ours = vaultChains[name].viemChain
    expect(ours.id).toBe(viemChain.id)
    expect(ours.name).toBe(viemChain.name)
    expect(ours.nativeCurrency).toEqual(viemChain.nativeCurrency)
    expect(ours.rpcUrls).toEqual(viemChain.rpcUrls)
    expect(ours.blockExplorers).toEqual(viemChain.blockExplorers)
    expect(ours.testnet).toBe(viemChain.testnet)
    expect(ours.contracts?.multicall3?.address.toLowerCase()).toBe(
      viemChain.contracts.multicall3.address.toLowerCase(),
    )
    // The devnet starts above it, so chain-aware block-pinned multicalls work there.
    expect(ours.contracts?.multicall3?.blockCreated).toBe(
      viemChain.contracts.multicall3.blockCreated,
    )
  })

  it('keep the Multicall3 blocks the devnet relies on', () => {
    expect(vaultChains['base-sepolia'].viemChain.contracts?.multicall3?.blockCreated).toBe(
      1_059_647,
    )
    expect(vaultChains.base.viemChain.contracts?.multicall3?.blockCreated).toBe(5022)
  })
})
