/**
 * The gas one sweep uses, rounded up: the bench's sweep (`bench/sweep.ts`: a merchant with no router
 * allowance, as a new one is, signs an EIP-2612 permit and deposits in one `depositWithPermit`
 * transaction) measured 217,986 gas, and 216,872 in another run (docs/performance.md); the vault's
 * state moves it by a few thousand, which the 5 % above the bench covers. The messages that ask for
 * ETH quote it, and `x402-vault sweep --watch` warns when the sending key holds less than ten sweeps'
 * worth.
 */
export const sweepGas = 230_000n

/** {@link sweepGas} as messages write it: `230,000`. */
export const sweepGasText = sweepGas.toLocaleString('en-US')
