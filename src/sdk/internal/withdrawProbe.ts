import { parseAbi } from 'viem'

/**
 * `WithdrawProbe` (src/sdk/contracts/WithdrawProbe.sol): `withdrawNet(router, net)` quotes
 * `previewWithdrawNet(net, wallet)` and withdraws those shares, as the wallet. Never deployed: a
 * withdrawal plan by USDC amount runs it at the wallet's address in its one simulation (a state
 * override), so the quote and the withdrawal need no round trip between them.
 */
export const withdrawProbeAbi = parseAbi([
  'function withdrawNet(address router, uint256 net) returns (uint256 shares, uint256 usdcOut)',
])

/**
 * The probe's runtime code, compiled offline with the npm `solc` and the devnet's compiler settings;
 * test/sdk/withdrawProbe.test.ts compiles the source again and fails when this is stale.
 */
export const withdrawProbeCode =
  '0x608060405234801561000f575f5ffd5b5060043610610029575f3560e01c8063e27f67d21461002d575b5f5ffd5b61004061003b36600461014a565b610059565b6040805192835260208301919091520160405180910390f35b604051630ff9fed160e21b8152600481018290523060248201525f9081906001600160a01b03851690633fe7fb4490604401602060405180830381865afa1580156100a6573d5f5f3e3d5ffd5b505050506040513d601f19601f820116820180604052508101906100ca919061017f565b604051631cc6d2f960e31b8152600481018290523060248201525f60448201529092506001600160a01b0385169063e63697c8906064016020604051808303815f875af115801561011d573d5f5f3e3d5ffd5b505050506040513d601f19601f82011682018060405250810190610141919061017f565b90509250929050565b5f5f6040838503121561015b575f5ffd5b82356001600160a01b0381168114610171575f5ffd5b946020939093013593505050565b5f6020828403121561018f575f5ffd5b505191905056' as const
