import { type Address, type Chain, defineChain } from 'viem'

// Every per-chain fact of this package lives in this file: the chains' ids, names and viem
// definitions, their public deployments, their USDC tokens with the EIP-712 domains buyers sign in,
// the environment variable that holds an RPC URL, and the contracts that sit at one address on every
// chain. Everything else reads it (`test/chainFacts.test.ts` fails on a chain's address or a
// chain-name comparison written anywhere else in `src/`). To add a chain: docs/development.md, "Add a
// chain".

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

/** How an x402 buyer authorises the transfer: EIP-3009 `transferWithAuthorization`, or Permit2. */
export type X402AssetTransferMethod = 'eip3009' | 'permit2'

/**
 * A USDC token as an x402 payment asset: its address and what goes into the requirement's `extra` (its
 * EIP-712 domain `name`/`version`, and the transfer method).
 */
export type X402UsdcAsset = {
  address: Address
  /** The token's EIP-712 domain name; required for EIP-3009, optional for Permit2. */
  name?: string | undefined
  /** The token's EIP-712 domain version; required for EIP-3009, optional for Permit2. */
  version?: string | undefined
  assetTransferMethod: X402AssetTransferMethod
}

/** A chain this package knows, with its public vault deployment. */
export type VaultChainEntry = {
  name: VaultChainName
  chainId: number
  /** viem's definition of the chain (its default RPC is the chain's public one). */
  viemChain: Chain
  /** The public deployment's contracts on this chain. */
  addresses: VaultAddresses
  /**
   * How x402 buyers pay in the deployment's USDC (`addresses.usdc`): its transfer method, and the
   * EIP-712 domain they sign in where it is known without reading the chain.
   */
  usdcPayment: Omit<X402UsdcAsset, 'address'>
  /**
   * x402's default USDC on this chain when it is not the deployment's: what a stock x402 buyer pays
   * in. A paywall accepts it beside the vault's USDC, and the ledger lists payments in it.
   */
  x402DefaultUsdc?: X402UsdcAsset | undefined
  /** The environment variable the CLI reads this chain's RPC URL from. */
  rpcUrlVariable: string
}

/*
 * Contracts at the same address on every chain (deployed with CREATE2 or from a keyless deployer), so
 * named once here rather than in each chain's entry. The devnet installs each at this address.
 */

/** The canonical Multicall3, on Base, Base Sepolia and the devnet. */
export const multicall3Address: Address = '0xcA11bde05977b3631167028862bE2a173976CA11'
/** Uniswap's Permit2: x402's Permit2 payments go through it. */
export const permit2Address: Address = '0x000000000022D473030F116dDEE9F6B43aC78BA3'
/**
 * x402's `exact` Permit2 proxy: the `spender` an x402 buyer names in its Permit2 signature, and the
 * contract a facilitator calls to settle such a payment.
 */
export const x402ExactPermit2ProxyAddress: Address = '0x402085c248EeA27D92E8b30b2C58ed07f9E20001'
/** x402's `upto` Permit2 proxy: as the `exact` one, for a payment of up to the signed amount. */
export const x402UptoPermit2ProxyAddress: Address = '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002'
/** x402's `batch-settlement` contract: the escrow of its payment channels. */
export const x402BatchSettlementAddress: Address = '0x4020074e9dF2ce1deE5A9C1b5c3f541D02a10003'
/** x402's EIP-3009 deposit collector for `batch-settlement`. */
export const x402Erc3009DepositCollectorAddress: Address =
  '0x4020806089470a89826cB9fB1f4059150b550004'
/**
 * x402's Permit2 deposit collector for `batch-settlement`, the spender `@x402/evm` 2.27's client names
 * in a Permit2 deposit (the package does not export this one).
 */
export const x402Permit2DepositCollectorAddress: Address =
  '0x4020425FAf3B746C082C2f942b4E5159887B0005'

/** The EIP-712 domain of Circle's USDC on Base mainnet (which has EIP-3009). */
export const circleUsdcDomain = { name: 'USD Coin', version: '2' } as const

/**
 * Circle's test USDC on Base Sepolia ("USDC", version "2", EIP-2612 and EIP-3009): x402's default
 * asset there, not the vault's.
 */
export const circleTestUsdc = {
  address: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  name: 'USDC',
  version: '2',
  assetTransferMethod: 'eip3009',
} as const satisfies X402UsdcAsset

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

/**
 * The chains this package knows, by name: each one's facts, and its public vault deployment. Adding a
 * chain is adding its name to {@link VaultChainName} and its entry here.
 */
export const vaultChains: Readonly<Record<VaultChainName, VaultChainEntry>> = {
  base: {
    name: 'base',
    chainId: base.id,
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
    // Circle's USDC, which is x402's default asset here too.
    usdcPayment: { ...circleUsdcDomain, assetTransferMethod: 'eip3009' },
    rpcUrlVariable: 'BASE_MAINNET_RPC_URL',
  },
  'base-sepolia': {
    name: 'base-sepolia',
    chainId: baseSepolia.id,
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
    // Aave's test USDC: no EIP-3009, so buyers pay it through Permit2. Its EIP-712 domain ("USDC",
    // version "1", and no `version()`) is read from the chain by `readX402UsdcAsset`.
    usdcPayment: { assetTransferMethod: 'permit2' },
    x402DefaultUsdc: circleTestUsdc,
    rpcUrlVariable: 'BASE_SEPOLIA_RPC_URL',
  },
}

/** The chain used where none is given (the CLI, the MCP server, the devnet): the testnet. */
export const defaultChainName = 'base-sepolia' as const satisfies VaultChainName

/** The names of the chains this package knows, in the table's order. */
export const vaultChainNames = Object.keys(vaultChains) as readonly VaultChainName[]

/**
 * Tells whether a value names a chain this package knows.
 *
 * @param value - Anything, such as a chain name from the user.
 * @returns `true` for a key of {@link vaultChains}.
 * @example
 * isVaultChainName('base-sepolia') // true
 * isVaultChainName('toString') // false
 */
export function isVaultChainName(value: unknown): value is VaultChainName {
  // A string first: an own key only, so that no inherited name such as `toString` passes.
  return typeof value === 'string' && Object.hasOwn(vaultChains, value)
}

/**
 * The chains' names for a message, the default chain first, joined with "or".
 *
 * @param show - How to write one chain. Default: its name in single quotes.
 * @returns Such as `'base-sepolia' or 'base'`.
 * @example
 * `Unknown chain: use ${chainChoices()}.` // "Unknown chain: use 'base-sepolia' or 'base'."
 * chainChoices((chain) => `${chain.name} (${chain.chainId})`) // 'base-sepolia (84532) or base (8453)'
 */
export function chainChoices(
  show: (chain: VaultChainEntry) => string = (chain) => `'${chain.name}'`,
): string {
  const names = [defaultChainName, ...vaultChainNames.filter((name) => name !== defaultChainName)]
  return names.map((name) => show(vaultChains[name])).join(' or ')
}

/**
 * Returns a chain's public RPC URL (viem's default for it): rate-limited, for reads when the user
 * gives none.
 *
 * @example
 * publicRpcUrlOf('base-sepolia') // 'https://sepolia.base.org'
 */
export function publicRpcUrlOf(chain: VaultChainName): string {
  return vaultChains[chain].viemChain.rpcUrls.default.http[0] as string
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
