import { type Address, isAddressEqual, type MulticallResponse } from 'viem'
import { multicall } from 'viem/actions'
import { routerAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import { multicallOptions, resultValue } from '../internal/read.js'
import { atBlock } from './balances.js'
import { type LedgerEntry, ledgerAction, type Scan } from './types.js'

/**
 * The x402 payers that are the wallet's operators on the router at the last block, in one `eth_call`
 * (none when every settlement's payer is already known to be the merchant's own), and those the
 * wallet made or unmade its operators within the blocks.
 */
export async function readOperators(
  ctx: VaultContext,
  wallet: Address,
  scan: Scan,
  blockNumber: bigint,
): Promise<Address[]> {
  const known = new Set([wallet, ...scan.operators].map((a) => a.toLowerCase()))
  const payers = [
    ...new Set(
      scan.drafts
        // A batch settle's counterparty is the contract, never a payer.
        .filter((draft) => draft.kind === 'x402' && draft.x402Scheme !== 'batch-settlement')
        .map((draft) => draft.counterparty.toLowerCase())
        .filter((payer) => !known.has(payer)),
    ),
  ] as Address[]
  if (payers.length === 0) return scan.operators
  const what = `${ledgerAction} (operators at block ${blockNumber})`
  const results = await atBlock(ctx, blockNumber, what, () =>
    multicall(ctx.publicClient, {
      ...multicallOptions,
      blockNumber,
      contracts: payers.map((payer) => ({
        address: ctx.addresses.router,
        abi: routerAbi,
        functionName: 'isOperator',
        args: [wallet, payer],
      })),
    }),
  )
  return [
    ...scan.operators,
    ...payers.filter((_, i) => resultValue(ctx, results[i] as MulticallResponse<boolean>, what)),
  ]
}

/**
 * Marks the x402 settlements from the merchant's own addresses as self-payments, and the other leg of a
 * payment from the wallet to itself (the same `Transfer`, listed out as well as in).
 */
export function markSelfPayments<entry extends Omit<LedgerEntry, 'balanceAfter'>>(
  drafts: entry[],
  wallet: Address,
  own: Address[],
): entry[] {
  const self = new Set(own.map((a) => a.toLowerCase()))
  const at = (d: entry) => `${d.txHash}:${d.logIndex}`
  const toItself = new Set(
    drafts
      .filter((d) => d.kind === 'x402' && isAddressEqual(d.counterparty, wallet))
      .map((d) => at(d)),
  )
  return drafts.map((draft) => {
    if (draft.kind === 'x402' && self.has(draft.counterparty.toLowerCase()))
      return { ...draft, kind: 'self-payment' }
    if (
      draft.kind === 'transfer-out' &&
      isAddressEqual(draft.counterparty, wallet) &&
      toItself.has(at(draft))
    ) {
      // The payment's own out leg carries its method, as its in leg does.
      const payment = drafts.find((d) => d.kind === 'x402' && at(d) === at(draft))
      return { ...draft, kind: 'self-payment', x402Method: payment?.x402Method ?? null }
    }
    return draft
  })
}
