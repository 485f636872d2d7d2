export {
  type AnvilInstance,
  resolveAnvilBinary,
  type StartAnvilOptions,
  startAnvil,
} from './anvil.js'
export { DevnetError, type DevnetErrorCode } from './errors.js'
export {
  createDevnetFacilitator,
  type FacilitatorServer,
  type FacilitatorServerOptions,
  startFacilitatorServer,
} from './facilitator.js'
export {
  type Devnet,
  type DevnetAccount,
  type StartDevnetOptions,
  startDevnet,
} from './startDevnet.js'
export {
  circleTestUsdcAddress,
  type DevnetTokens,
  type DevnetUsdcFlavour,
} from './tokens.js'
export { writeAddressesFile } from './writeAddressesFile.js'
