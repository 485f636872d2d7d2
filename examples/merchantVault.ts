/**
 * The merchant's vault client and facilitator from the environment, shared by the merchant examples.
 *
 *   VAULT_CHAIN                    base (default) or base-sepolia
 *   BASE_MAINNET_RPC_URL           the RPC on base          (BASE_SEPOLIA_RPC_URL on base-sepolia)
 *   MERCHANT_PRIVATE_KEY           the merchant wallet: receives payments, sends the sweeps' deposits
 *   X402_FACILITATOR_URL           an x402 facilitator that supports the chain
 *   X402_FACILITATOR_BEARER_TOKEN  optional, for facilitators that require one
 *   VAULT_ADDRESSES                optional, an addresses JSON (the devnet's); default: the public deployment
 */
import { createPublicClient, createWalletClient, type Hex } from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { createVaultClient, loadVaultAddresses, vaultChains, vaultHttp } from 'x402-vault'

/** `process.env`, or an edge runtime's bindings. */
export type MerchantEnv = Record<string, string | undefined>

/** Each chain's RPC variable. */
const rpcVariables = { base: 'BASE_MAINNET_RPC_URL', 'base-sepolia': 'BASE_SEPOLIA_RPC_URL' }

/**
 * Builds the merchant's vault client (with a wallet client that sends the sweeps) from `env`.
 *
 * @param env - `process.env` in Node; the bindings on an edge runtime.
 * @returns The vault client, the merchant account and whether the chain is a test network.
 * @throws When a variable is missing or malformed, naming it.
 */
export async function merchantVaultFromEnv(env: MerchantEnv) {
  const chain = env.VAULT_CHAIN ?? 'base'
  if (chain !== 'base' && chain !== 'base-sepolia') {
    throw new Error(`VAULT_CHAIN must be base or base-sepolia, not ${JSON.stringify(chain)}.`)
  }
  const rpcUrl = env[rpcVariables[chain]]
  if (!rpcUrl) throw new Error(`Set ${rpcVariables[chain]}.`)
  const key = env.MERCHANT_PRIVATE_KEY
  if (!key || !/^0x[0-9a-fA-F]{64}$/.test(key)) {
    throw new Error('MERCHANT_PRIVATE_KEY must be 0x followed by 64 hex digits.')
  }
  const merchant = privateKeyToAccount(key as Hex)
  const viemChain = vaultChains[chain].viemChain
  const transport = vaultHttp(rpcUrl) // bounded retries on 429/5xx/timeouts
  const vault = createVaultClient({
    publicClient: createPublicClient({ chain: viemChain, transport }),
    walletClient: createWalletClient({ account: merchant, chain: viemChain, transport }),
    chain,
    addresses: env.VAULT_ADDRESSES
      ? await loadVaultAddresses(env.VAULT_ADDRESSES, { chain })
      : undefined,
  })
  return { vault, merchant, testnet: chain === 'base-sepolia' }
}

/**
 * The x402 facilitator for `createPaywall` from `env`: `X402_FACILITATOR_URL` and, when the
 * facilitator requires one, `X402_FACILITATOR_BEARER_TOKEN`.
 *
 * @throws When `X402_FACILITATOR_URL` is missing.
 */
export function facilitatorFromEnv(env: MerchantEnv) {
  if (!env.X402_FACILITATOR_URL) throw new Error('Set X402_FACILITATOR_URL.')
  return {
    url: env.X402_FACILITATOR_URL,
    bearerToken: env.X402_FACILITATOR_BEARER_TOKEN || undefined,
  }
}
