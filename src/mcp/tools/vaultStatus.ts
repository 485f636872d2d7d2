import { formatUnits } from 'viem'
import { z } from 'zod'
import { getStatus, mapField } from '../../index.js'
import { integerField, usdcAmount, usdcField } from '../json.js'
import {
  addressOutput,
  chainOutput,
  field,
  integerOutput,
  readOnlyAnnotations,
  toolInput,
  usdcOutput,
} from '../schemas.js'
import { defineTool } from '../tool.js'

/** `vault_status`: the vault's state at one block, in one RPC round trip. */
export const vaultStatus = defineTool({
  kind: 'read',
  name: 'vault_status',
  title: 'Vault status',
  description:
    'Reads the x402-vault USDC yield vault on Base Sepolia, all values from one block: whether deposits are paused, the minimum deposit, the TVL cap and the room left, total assets and shares, the price per share, the share token, the oracle’s freshness, the fee treasury, the split between the lending market (Aave) and the lending vault (Morpho), and what can be withdrawn now.',
  inputSchema: toolInput('vault_status', {}),
  outputSchema: z.object({
    chain: chainOutput(),
    chainId: z.number().int(),
    network: z.string().describe('The x402 network id, such as eip155:84532.'),
    blockNumber: integerOutput('The block every value was read at.'),
    blockTimestamp: integerOutput('That block’s time (unix seconds).'),
    depositsPaused: field(z.boolean().describe('Deposits are paused; withdrawals still work.')),
    minDeposit: field(usdcOutput('The smallest deposit the vault accepts.')),
    tvlCap: field(usdcOutput('The cap on total assets; null when there is none.').nullable()),
    tvlHeadroom: field(
      usdcOutput(
        'How much more can be deposited before the cap; null when there is no cap.',
      ).nullable(),
    ),
    totalAssets: field(usdcOutput('USDC the vault manages across both venues.')),
    totalShares: field(integerOutput('Shares in existence, in base units (6 decimals).')),
    pricePerShare: field(
      z
        .object({
          usdcPerShare: z.string().describe('USDC one share is worth, as a decimal.'),
          scaled1e18: z.string().describe('The same, scaled by 1e18, as the router reports it.'),
        })
        .describe('What one share is worth.'),
    ),
    shareToken: z
      .object({
        address: addressOutput('The share token contract.'),
        symbol: field(z.string().describe('Its symbol, read from the chain.')),
      })
      .describe('The token the vault mints for deposits (not transferable between wallets).'),
    oracle: z
      .object({
        fresh: field(z.boolean().describe('Deposits need a fresh oracle.')),
        lastObservationTime: field(integerOutput('Unix time of the last rate observation.')),
        ageSeconds: field(integerOutput('Seconds since the last observation.')),
        maxStalenessSeconds: field(integerOutput('The oracle is fresh up to this age.')),
      })
      .describe('The yield oracle that picks the venue for new deposits.'),
    treasury: z
      .object({
        current: field(addressOutput('Where the fee on realised yield goes.')),
        pending: field(addressOutput('The proposed next treasury; null when none.').nullable()),
        rotationEffectiveAt: field(
          integerOutput(
            'When the pending treasury may take over (unix seconds); null when none.',
          ).nullable(),
        ),
      })
      .describe('The fee treasury.'),
    allocation: z
      .object({
        aave: field(usdcOutput('USDC in the lending market (Aave).')),
        morpho: field(usdcOutput('USDC in the lending vault (Morpho).')),
      })
      .describe('Where the assets are.'),
    withdrawCapacity: z
      .object({
        aaveAssetsHeld: field(usdcOutput('USDC held in Aave.')),
        aaveIdleLiquidity: field(usdcOutput('Aave’s idle liquidity.')),
        aaveWithdrawCap: field(usdcOutput('What Aave can pay out now.')),
        morphoAssetsHeld: field(usdcOutput('USDC held in Morpho.')),
        morphoWithdrawCap: field(usdcOutput('What Morpho can pay out now.')),
        morphoReachable: field(
          z.boolean().describe('false when Morpho cannot be valued: withdrawals then fail.'),
        ),
        totalWithdrawCap: field(usdcOutput('What all withdrawals together can take out now.')),
      })
      .describe('What the venues can pay out right now.'),
    contracts: z
      .object({
        router: addressOutput('The vault router: deposits, withdrawals, registration.'),
        oracle: addressOutput('The yield oracle.'),
        feeCollector: addressOutput('The fee collector.'),
        shareToken: addressOutput('The share token.'),
        usdc: addressOutput('The USDC the vault takes.'),
        aavePool: addressOutput('The Aave pool.'),
        aToken: addressOutput('Aave’s interest-bearing USDC.'),
        morphoVault: addressOutput('The Morpho vault.'),
      })
      .describe('The deployment this server reads.'),
  }),
  annotations: readOnlyAnnotations,
  async handler(_input, context) {
    const vault = await context.vault()
    const status = await getStatus(vault)
    const optionalUsdc = (value: bigint | null) => (value === null ? null : usdcAmount(value))
    const capacity = status.withdrawCapacity
    return {
      chain: status.chain,
      chainId: status.chainId,
      network: status.network,
      blockNumber: status.blockNumber.toString(),
      blockTimestamp: status.blockTimestamp.toString(),
      depositsPaused: status.depositsPaused,
      minDeposit: usdcField(status.minDeposit),
      tvlCap: mapField(status.tvlCap, optionalUsdc),
      tvlHeadroom: mapField(status.tvlHeadroom, optionalUsdc),
      totalAssets: usdcField(status.totalAssets),
      totalShares: integerField(status.totalShares),
      pricePerShare: mapField(status.pricePerShare, (scaled) => ({
        usdcPerShare: formatUnits(scaled, 18),
        scaled1e18: scaled.toString(),
      })),
      shareToken: { address: vault.addresses.shareToken, symbol: status.shareSymbol },
      oracle: {
        fresh: status.oracle.fresh,
        lastObservationTime: integerField(status.oracle.lastObservationTime),
        ageSeconds: integerField(status.oracle.ageSeconds),
        maxStalenessSeconds: integerField(status.oracle.maxStalenessSeconds),
      },
      treasury: {
        current: status.treasury.current,
        pending: status.treasury.pending,
        rotationEffectiveAt: mapField(status.treasury.rotationEffectiveAt, (time) =>
          time === null ? null : time.toString(),
        ),
      },
      allocation: {
        aave: usdcField(status.allocation.aave),
        morpho: usdcField(status.allocation.morpho),
      },
      withdrawCapacity: {
        aaveAssetsHeld: usdcField(capacity.aaveAssetsHeld),
        aaveIdleLiquidity: usdcField(capacity.aaveIdleLiquidity),
        aaveWithdrawCap: usdcField(capacity.aaveWithdrawCap),
        morphoAssetsHeld: usdcField(capacity.morphoAssetsHeld),
        morphoWithdrawCap: usdcField(capacity.morphoWithdrawCap),
        morphoReachable: capacity.morphoReachable,
        totalWithdrawCap: usdcField(capacity.totalWithdrawCap),
      },
      contracts: { ...vault.addresses },
    }
  },
})
