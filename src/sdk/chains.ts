import { type Address, type Chain, defineChain } from 'viem'

/** A chain this package knows: Base mainnet or Base Sepolia. */
export type VaultChainName = 'base' | 'base-sepolia'

/** Every contract address one vault deployment is made of. */
export type VaultAddresses = {
  router: Address
  oracle: Address
  feeCollector: Address
  shareToken: Address
  usdc: Address
  aavePool: Address
  aToken: Address
  morphoVault: Address
}

/** The x402 network id (CAIP-2) of a chain, such as `eip155:8453`. */
export type VaultNetwork = `eip155:${number}`

/** A chain this package knows, with its public vault deployment. */
export type VaultChainEntry = {
  name: VaultChainName
  chainId: number
  /** viem's definition of the chain. */
  viemChain: Chain
  /** The public deployment's contracts on this chain. */
  addresses: VaultAddresses
}

/** The canonical Multicall3 address on Base, Base Sepolia and the devnet. */
export const multicall3Address = '0xcA11bde05977b3631167028862bE2a173976CA11' as const

/*
 * The two chains, defined here rather than imported from `viem/chains`: that module is a barrel of
 * every chain viem knows, and importing it took 0.5 s of the SDK's 0.55 s import. The facts are
 * viem's (ids, names, currency, RPC, explorer, Multicall3 and its `blockCreated`, which the devnet
 * starts above). The OP-stack formatters viem adds are left out: they only matter for reading L1
 * deposit transactions, and the SDK reads with the caller's client and chain, never with these.
 * A caller's own viem chain (`viem/chains`' `base`) is still accepted everywhere.
 */
const base = defineChain({
  id: 8453,
  name: 'Base',
  nativeCurrency: { name: 'Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['https://mainnet.base.org'] } },
  blockExplorers: {
    default: {
      name: 'Basescan',
      url: 'https://basescan.org',
      apiUrl: 'https://api.basescan.org/api',
    },
  },
  contracts: { multicall3: { address: multicall3Address, blockCreated: 5022 } },
})

const baseSepolia = defineChain({
  id: 84532,
  name: 'Base Sepolia',
  nativeCurrency: { name: 'Sepolia Ether', symbol: 'ETH', decimals: 18 },
  rpcUrls: { default: { http: ['https://sepolia.base.org'] } },
  blockExplorers: {
    default: {
      name: 'Basescan',
      url: 'https://sepolia.basescan.org',
      apiUrl: 'https://api-sepolia.basescan.org/api',
    },
  },
  contracts: { multicall3: { address: multicall3Address, blockCreated: 1_059_647 } },
  testnet: true,
})

/** The vault's public deployments: Base and Base Sepolia, by chain name. */
export const vaultChains: Readonly<Record<VaultChainName, VaultChainEntry>> = {
  base: {
    name: 'base',
    chainId: 8453,
    viemChain: base,
    addresses: {
      router: '0xE958A89c2CCa697d4896990685800cc1D5AF2A01',
      oracle: '0x3Ba775E8fAE60E72c99dE10C720fC44ab38BF71A',
      feeCollector: '0x1a2eF76E6E323D95f836917f812f6D159c3A0960',
      shareToken: '0x1497f7F3b156e110b1d90BC7F1759F40fb48Ea4F',
      usdc: '0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913',
      aavePool: '0xA238Dd80C259a72e81d7e4664a9801593F98d1c5',
      aToken: '0x4e65fE4DbA92790696d040ac24Aa414708F5c0AB',
      morphoVault: '0xbeeF010f9cb27031ad51e3333f9aF9C6B1228183',
    },
  },
  'base-sepolia': {
    name: 'base-sepolia',
    chainId: 84532,
    viemChain: baseSepolia,
    addresses: {
      router: '0x17180C48f904D2b675bBa67519b7879F6b036053',
      oracle: '0xEA191c9B25464975A46Cb482dCfD7964F44a4246',
      feeCollector: '0x60cB437995551d19C59BEa25c045A739ed6A0f54',
      shareToken: '0xD518B1329d0EC47EeC45775A988a18f93C37862A',
      usdc: '0xba50Cd2A20f6DA35D788639E581bca8d0B5d4D5f',
      aavePool: '0x8bAB6d1b75f19e9eD9fCe8b9BD338844fF79aE27',
      aToken: '0x10F1A9D11CDf50041f3f8cB7191CBE2f31750ACC',
      morphoVault: '0x7d646Ac22d219507f02D9154a321f34c6F0f3b08',
    },
  },
}

/** The names of the address fields, in a fixed order. */
export const vaultAddressKeys = [
  'router',
  'oracle',
  'feeCollector',
  'shareToken',
  'usdc',
  'aavePool',
  'aToken',
  'morphoVault',
] as const satisfies readonly (keyof VaultAddresses)[]

/**
 * Returns the x402 network id of a chain.
 *
 * @example
 * networkOf('base') // 'eip155:8453'
 */
export function networkOf(chain: VaultChainName): VaultNetwork {
  return `eip155:${vaultChains[chain].chainId}`
}
