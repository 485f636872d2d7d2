export {
  multicall3Address,
  networkOf,
  type VaultAddresses,
  type VaultChainName,
  type VaultNetwork,
  vaultAddressKeys,
  vaultChains,
} from './sdk/chains.js'
