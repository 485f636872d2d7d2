import { z } from 'zod'
import { getYield, mapField, type VenueYield } from '../../index.js'
import { rate } from '../json.js'
import {
  addressOutput,
  chainOutput,
  field,
  integerOutput,
  rateOutput,
  readOnlyAnnotations,
  toolInput,
} from '../schemas.js'
import { defineTool } from '../tool.js'

function venueOutput(description: string) {
  return z
    .object({
      venue: z.enum(['aave', 'morpho']),
      vault: field(addressOutput('The venue contract the oracle reports.')),
      spotRate: field(rateOutput('The current rate, annualised.')),
      timeWeightedRate: field(
        rateOutput('The time-weighted rate (about the last 4 hours), which decides routing.'),
      ),
      safe: field(z.boolean().describe('Whether the oracle considers the venue safe.')),
    })
    .describe(description)
}

function venueJson(venue: VenueYield) {
  return {
    venue: venue.venue,
    vault: venue.vault,
    spotRate: mapField(venue.spotRay, rate),
    timeWeightedRate: mapField(venue.twarRay, rate),
    safe: venue.safe,
  }
}

/** `vault_check_yield`: each venue's rates and the venue new deposits go to, in one RPC round trip. */
export const vaultCheckYield = defineTool({
  kind: 'read',
  name: 'vault_check_yield',
  title: 'Check vault yield',
  description:
    'Reads the rates the x402-vault USDC yield vault on Base Sepolia earns, from one block: for the lending market (Aave) and the lending vault (Morpho), the current and the time-weighted rate as an APY percentage and in ray, and whether each is safe; plus the venue the oracle selects for new deposits (or why none is safe) and whether the oracle is fresh.',
  inputSchema: toolInput('vault_check_yield', {}),
  outputSchema: z.object({
    chain: chainOutput(),
    chainId: z.number().int(),
    blockNumber: integerOutput('The block every value was read at.'),
    blockTimestamp: integerOutput('That block’s time (unix seconds).'),
    aave: venueOutput('The lending market (Aave).'),
    morpho: venueOutput('The lending vault (Morpho).'),
    selectedVenue: field(
      z
        .object({
          venue: z.enum(['aave', 'morpho']),
          vault: addressOutput('The venue contract.'),
          timeWeightedRate: rateOutput('Its time-weighted rate.'),
        })
        .describe(
          'Where new deposits go now. Unavailable with code NO_SAFE_VAULT when no venue is safe.',
        ),
    ),
    oracleFresh: field(z.boolean().describe('Deposits need a fresh oracle.')),
  }),
  annotations: readOnlyAnnotations,
  async handler(_input, context) {
    const vault = await context.vault()
    const yields = await getYield(vault)
    return {
      chain: yields.chain,
      chainId: yields.chainId,
      blockNumber: yields.blockNumber.toString(),
      blockTimestamp: yields.blockTimestamp.toString(),
      aave: venueJson(yields.aave),
      morpho: venueJson(yields.morpho),
      selectedVenue: mapField(yields.optimal, (optimal) => ({
        venue: optimal.venue,
        vault: optimal.vault,
        timeWeightedRate: rate(optimal.twarRay),
      })),
      oracleFresh: yields.oracleFresh,
    }
  },
})
