import { z } from 'zod'
import { getPosition } from '../../index.js'
import { parseWalletInput } from '../inputs.js'
import { integerField, usdcField } from '../json.js'
import {
  addressOutput,
  chainOutput,
  field,
  integerOutput,
  readOnlyAnnotations,
  toolInput,
  usdcOutput,
  walletInput,
} from '../schemas.js'
import { defineTool } from '../tool.js'

/** `vault_get_position`: one wallet's position, in one RPC round trip. */
export const vaultGetPosition = defineTool({
  kind: 'read',
  name: 'vault_get_position',
  title: 'Get a wallet’s vault position',
  description:
    'Reads one wallet’s position in the x402-vault USDC yield vault on Base Sepolia, from one block: whether it is registered with the vault router (needed before its first deposit), its USDC balance and the allowance the router may spend, its shares, what it deposited, what that is worth now, the yield accrued, and withdrawableUsdc: what withdrawing everything pays now, after the fee (a vault_plan_withdraw for that amount works). Any address can be read; no key is needed.',
  inputSchema: toolInput('vault_get_position', {
    wallet: walletInput('The wallet to read: 0x followed by 40 hex digits.'),
  }),
  outputSchema: z.object({
    chain: chainOutput(),
    chainId: z.number().int(),
    wallet: addressOutput('The wallet, checksummed.'),
    blockNumber: integerOutput('The block every value was read at.'),
    blockTimestamp: integerOutput('That block’s time (unix seconds).'),
    registered: field(
      z.boolean().describe('Registered with the router: deposits and withdrawals need it.'),
    ),
    liquidUsdc: field(usdcOutput('USDC in the wallet, outside the vault.')),
    allowance: field(usdcOutput('USDC the vault router may pull from the wallet.')),
    shares: field(integerOutput('Vault shares held, in base units (6 decimals).')),
    deposited: field(usdcOutput('USDC deposited and not yet withdrawn (cost basis).')),
    currentValue: field(usdcOutput('What the shares are worth now, before the fee on yield.')),
    accruedYield: field(usdcOutput('currentValue − deposited, floored at 0, before the fee.')),
    withdrawableUsdc: field(
      usdcOutput('What withdrawing every share pays now, after the fee on yield.'),
    ),
  }),
  annotations: readOnlyAnnotations,
  async handler(input, context) {
    const wallet = parseWalletInput(input.wallet)
    const vault = await context.vault()
    const position = await getPosition(vault, { wallet })
    return {
      chain: position.chain,
      chainId: position.chainId,
      wallet: position.wallet,
      blockNumber: position.blockNumber.toString(),
      blockTimestamp: position.blockTimestamp.toString(),
      registered: position.registered,
      liquidUsdc: usdcField(position.liquidUsdc),
      allowance: usdcField(position.allowance),
      shares: integerField(position.shares),
      deposited: usdcField(position.deposited),
      currentValue: usdcField(position.currentValue),
      accruedYield: usdcField(position.accruedYield),
      withdrawableUsdc: usdcField(position.withdrawableUsdc),
    }
  },
})
