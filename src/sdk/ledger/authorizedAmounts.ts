import { type Address, decodeFunctionData, type Hash, isAddressEqual } from 'viem'
import { getTransaction } from 'viem/actions'
import { x402UptoPermit2ProxyAbi } from '../abis/x402.js'
import { x402UptoPermit2ProxyAddress } from '../chains.js'
import type { VaultContext } from '../context.js'
import { guard } from '../internal/read.js'
import { forEachLimited } from './balances.js'
import { type Draft, ledgerAction } from './types.js'

/**
 * The most the buyer authorized for each `upto` settlement. x402's `upto` proxy emits no arguments
 * and Permit2 no event, so the permit's amount is only in the settle transaction's calldata: one
 * `eth_getTransactionByHash` per `upto` settle transaction (a few at once). A transaction that is not a
 * direct call of the proxy paying the wallet what the entry says (a facilitator behind a smart
 * account, say) leaves the maximum `null`.
 */
export async function readAuthorizedAmounts<entry extends Draft>(
  ctx: VaultContext,
  wallet: Address,
  entries: entry[],
): Promise<Map<entry, bigint | null>> {
  const upto = entries.filter((e) => e.x402Scheme === 'upto')
  if (upto.length === 0) return new Map()
  const maximums = new Map<Hash, ReturnType<typeof permitOf>>()
  await forEachLimited([...new Set(upto.map((e) => e.txHash))], async (hash) => {
    const transaction = await guard(ctx, `${ledgerAction} (transaction ${hash})`, () =>
      getTransaction(ctx.publicClient, { hash }),
    )
    maximums.set(hash, permitOf(transaction, wallet))
  })
  return new Map(
    upto.map((entry) => {
      const permit = maximums.get(entry.txHash)
      const matches =
        permit !== undefined &&
        permit.amount === entry.amount &&
        isAddressEqual(permit.token, entry.token) &&
        isAddressEqual(permit.owner, entry.counterparty)
      return [entry, matches ? permit.maximum : null] as const
    }),
  )
}

/** The permit of a direct call of the `upto` proxy that pays `wallet`: its token, owner, amount settled and maximum. */
function permitOf(transaction: { to: Address | null; input: `0x${string}` }, wallet: Address) {
  if (!transaction.to || !isAddressEqual(transaction.to, x402UptoPermit2ProxyAddress))
    return undefined
  try {
    const call = decodeFunctionData({ abi: x402UptoPermit2ProxyAbi, data: transaction.input })
    const [permit, amount, owner, witness] =
      call.functionName === 'settle'
        ? call.args
        : [call.args[1], call.args[2], call.args[3], call.args[4]]
    if (!isAddressEqual(witness.to, wallet)) return undefined
    return { token: permit.permitted.token, owner, amount, maximum: permit.permitted.amount }
  } catch {
    return undefined
  }
}
