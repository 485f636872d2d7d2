import { vaultChains } from '../index.js'
import { defaultChainName, vaultChainNames } from '../sdk/shared.js'

/** The chains in the order help texts list them: the default first. */
const helpChains = [
  defaultChainName,
  ...vaultChainNames.filter((name) => name !== defaultChainName),
]

/** `--chain`'s value as help texts show it, from the chain table: the names between `<>`, split by `|`. */
export const chainFlagValue = `<${helpChains.join('|')}>`

/** The chains' RPC URL variables as help texts name them: `BASE_SEPOLIA_RPC_URL or BASE_MAINNET_RPC_URL`. */
export const rpcUrlVariables = helpChains
  .map((name) => vaultChains[name].rpcUrlVariable)
  .join(' or ')

/**
 * The help lines that name each chain's RPC URL variable, from the chain table, so that a chain
 * added to the table shows in every command's help.
 *
 * @param width - The column the explanations start at (the variables are indented by two).
 * @returns One line per chain, `  BASE_SEPOLIA_RPC_URL    the RPC URL for --chain base-sepolia (…)`.
 * @example
 * `Environment:\n${rpcUrlVariableLines(26)}`
 */
export function rpcUrlVariableLines(width: number): string {
  return helpChains
    .map(
      (name) =>
        `  ${vaultChains[name].rpcUrlVariable.padEnd(width - 2)}the RPC URL for --chain ${name} (unless --rpc is given)`,
    )
    .join('\n')
}
