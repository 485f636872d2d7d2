// `x402-vault/devnet`: a local chain with the vault deployed, for tests and demos. The API report
// `api/x402-vault.devnet.api.md` records this list.
export { devnetAbis } from './devnetAbis.js'
export { DevnetError, type DevnetErrorCode } from './errors.js'
export {
  type Devnet,
  type DevnetAccount,
  type StartDevnetOptions,
  startDevnet,
} from './startDevnet.js'
export { circleTestUsdcAddress, type DevnetTokens } from './tokens.js'
export { writeAddressesFile } from './writeAddressesFile.js'
