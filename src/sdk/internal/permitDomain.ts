import { type Address, domainSeparator, type Hex } from 'viem'

/** What a token says of its EIP-712 domain: `name()`, `version()` when it has one, `DOMAIN_SEPARATOR()`. */
export type TokenDomainFacts = {
  name: string
  /** `undefined` when the token has no `version()` (Aave's test USDC has `EIP712_REVISION()` instead). */
  version: string | undefined
  domainSeparator: Hex
}

/** The EIP-712 domain of a token, as a signer needs it. */
export type TokenDomain = {
  name: string
  version: string
  chainId: number
  verifyingContract: Address
}

/**
 * The token's EIP-712 domain: the first version, of `version()` and the two USDC uses ("2" for Circle's,
 * "1" for Aave's test token, which has no `version()`), whose domain hashes to the token's own
 * `DOMAIN_SEPARATOR()`. A signature in any other domain would not recover its signer on chain.
 *
 * @param facts - The token's `name()`, `version()` and `DOMAIN_SEPARATOR()`.
 * @param chainId - The chain the token is on.
 * @param verifyingContract - The token's address.
 * @returns The domain, or `undefined` when no candidate matches.
 * @example
 * const domain = tokenDomainOf({ name: 'USDC', version: undefined, domainSeparator }, 84532, usdc)
 * // { name: 'USDC', version: '1', chainId: 84532, verifyingContract: usdc }
 */
export function tokenDomainOf(
  facts: TokenDomainFacts,
  chainId: number,
  verifyingContract: Address,
): TokenDomain | undefined {
  const versions = new Set([facts.version, '2', '1'])
  for (const version of versions) {
    if (typeof version !== 'string') continue
    const domain = { name: facts.name, version, chainId, verifyingContract }
    if (domainSeparator({ domain }).toLowerCase() === facts.domainSeparator.toLowerCase()) {
      return domain
    }
  }
  return undefined
}
