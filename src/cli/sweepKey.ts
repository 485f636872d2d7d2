import type { Account, Address } from 'viem'
import { evmAddress } from '../index.js'
import { accountFromKey } from './connect.js'
import { UsageError } from './usageError.js'

/**
 * Who sends a sweep's deposits, for which wallet:
 * - `merchant`: `MERCHANT_PRIVATE_KEY`, the key of the wallet that holds the revenue;
 * - `operator`: `SWEEPER_PRIVATE_KEY`, a key the wallet made its operator with the router
 *   (`setOperator`). It only pays gas: the router pulls the wallet's USDC into the vault under the
 *   wallet's allowance, and withdrawals only ever pay the wallet.
 */
export type SweepKey = {
  kind: 'merchant' | 'operator'
  account: Account
  /** The wallet swept. */
  wallet: Address
}

/**
 * The sending key and the wallet from the environment and `--wallet`. `SWEEPER_PRIVATE_KEY` wins
 * when both keys are set; it needs `--wallet`. Neither key is ever part of a message.
 *
 * @param env - Where the keys come from.
 * @param walletFlag - `--wallet`, if given.
 * @returns The key's account, its kind and the wallet.
 * @throws {UsageError} When no key is set, a key is malformed, or `--wallet` is missing or does not
 *   match the merchant key.
 */
export function sweepKeyOf(env: NodeJS.ProcessEnv, walletFlag: string | undefined): SweepKey {
  const wallet = walletFlag === undefined ? undefined : walletOption(walletFlag)
  if (env.SWEEPER_PRIVATE_KEY) {
    const account = accountFromKey(env.SWEEPER_PRIVATE_KEY, 'SWEEPER_PRIVATE_KEY')
    if (!wallet) {
      throw new UsageError(
        'SWEEPER_PRIVATE_KEY is an operator key: pass the merchant wallet it sweeps with --wallet <address>.',
      )
    }
    if (wallet === account.address) {
      throw new UsageError(
        "SWEEPER_PRIVATE_KEY is the wallet's own key: set it as MERCHANT_PRIVATE_KEY instead, or use another key as the operator.",
      )
    }
    return { kind: 'operator', account, wallet }
  }
  if (!env.MERCHANT_PRIVATE_KEY) {
    throw new UsageError(
      'MERCHANT_PRIVATE_KEY is not set: export the merchant wallet’s private key (0x + 64 hex digits), or an operator key as SWEEPER_PRIVATE_KEY with --wallet.',
    )
  }
  const account = accountFromKey(env.MERCHANT_PRIVATE_KEY, 'MERCHANT_PRIVATE_KEY')
  if (wallet && wallet !== account.address) {
    throw new UsageError(
      `--wallet ${wallet} is not the wallet of MERCHANT_PRIVATE_KEY (${account.address}); to sweep it with another key, set that key as SWEEPER_PRIVATE_KEY.`,
    )
  }
  return { kind: 'merchant', account, wallet: account.address }
}

/**
 * Checks an address option.
 *
 * @throws {UsageError} For anything but a 0x address of 40 hex digits.
 */
export function walletOption(text: string, flag = '--wallet'): Address {
  try {
    return evmAddress(text)
  } catch (error) {
    throw new UsageError(`${flag}: ${(error as Error).message}`)
  }
}
