import { type Address, encodeErrorResult, type Hex, isHex } from 'viem'
import { routerAbi } from '../abis/index.js'
import type { VaultContext } from '../context.js'
import type { VaultError } from '../errors/classes.js'
import { asMorphoUnreachable, fromRevertData } from '../errors/contract.js'
import { MalformedRpcAnswerError, readRpcFailure } from '../errors/rpc.js'
import type { DecodeContext } from './read.js'

/** One step to simulate: a call from the plan's wallet. */
export type SimulatedStep = { to: Address; data: Hex }

/** What one simulated step did: its return data, or its revert data. */
export type StepOutcome = { status: 'success'; data: Hex } | { status: 'reverted'; data: Hex }

/**
 * The simulation of a plan's steps: each step's outcome, in order; `unsupported` when the RPC refused
 * `eth_simulateV1` (a JSON-RPC error, such as "method not found"), with that error.
 */
export type StepsSimulation =
  | { supported: true; steps: StepOutcome[] }
  | { supported: false; error: unknown }

/**
 * Simulates `steps` from `from`, one after the other in one simulated block on top of the latest, with
 * `eth_simulateV1`: each step sees what the earlier ones did, and a step that reverts leaves the state
 * as it was for the next. Nothing is signed or sent; gas and the wallet's ETH are not checked
 * (`validation: false`), so a wallet without ETH simulates too.
 *
 * It makes one JSON-RPC call, which the caller starts in the same tick as its multicall read so a
 * batching transport sends both in one HTTP request. It does not wait for any other request first.
 *
 * @param ctx - The vault client.
 * @param from - The wallet the steps are sent from.
 * @param steps - The calls, in order.
 * @param code - Code to run at `from` for this simulation only (a state override), when the steps
 *   must run as the wallet's own code.
 * @returns Each step's outcome, or `supported: false` when the RPC refused the method. Transport
 *   failures (timeouts, HTTP errors, unreachable) are thrown as they are.
 */
export async function simulateSteps(
  ctx: VaultContext,
  from: Address,
  steps: readonly SimulatedStep[],
  code?: Hex,
): Promise<StepsSimulation> {
  let answer: unknown
  try {
    answer = await ctx.publicClient.request({
      method: 'eth_simulateV1',
      params: [
        {
          blockStateCalls: [
            {
              ...(code ? { stateOverrides: { [from]: { code } } } : {}),
              calls: steps.map((step) => ({ from, to: step.to, data: step.data })),
            },
          ],
          validation: false,
          traceTransfers: false,
        },
        'latest',
      ],
    } as never)
  } catch (error) {
    // A well-formed JSON-RPC error for this one method: the RPC does not offer it (or not in this
    // form). Anything else is RPC trouble that would fail the plan's reads as well.
    const failure = readRpcFailure(error)
    if (failure?.kind === 'jsonRpc' && !failure.rateLimited) return { supported: false, error }
    throw error
  }
  return { supported: true, steps: outcomesOf(answer, steps.length) }
}

/** Reads the calls' outcomes out of an `eth_simulateV1` answer; a malformed one throws. */
function outcomesOf(answer: unknown, count: number): StepOutcome[] {
  const calls = Array.isArray(answer)
    ? (answer[0] as { calls?: unknown } | undefined)?.calls
    : undefined
  if (!Array.isArray(calls) || calls.length !== count) {
    throw new MalformedRpcAnswerError(
      `The answer to eth_simulateV1 does not hold ${count} call results.`,
    )
  }
  return calls.map(
    (call: { status?: unknown; returnData?: unknown; error?: { data?: unknown } }) => {
      const data = isHex(call.returnData) ? call.returnData : '0x'
      if (call.status === '0x1') return { status: 'success', data }
      // Nodes put the revert data in `returnData` (anvil, geth) or in `error.data`.
      const revert = data !== '0x' ? data : isHex(call.error?.data) ? call.error.data : '0x'
      return { status: 'reverted', data: revert }
    },
  )
}

/**
 * The decoded error of a simulated step that reverted with `data`, as the plan's reads decode theirs
 * (a revert no vault ABI knows, while Morpho does not answer, is Morpho's).
 *
 * @param decode - The vault client and what the reads learnt of Morpho.
 * @param step - The step's contract role and function, and the action for the message.
 * @param data - The revert data.
 * @returns The error to throw.
 */
export function stepRevertError(
  decode: DecodeContext,
  step: { contract: 'router' | 'usdc'; functionName: string; action: string },
  data: Hex,
): VaultError {
  const prefix = `${step.action}: `
  const error = fromRevertData(data, { ...step, prefix, cause: undefined })
  return decode.morphoReachable === false ? asMorphoUnreachable(error, prefix) : error
}

/**
 * The error of a simulated router call whose result is below the minimum the planned transaction
 * accepts: the router's own `SlippageExceeded(received, minimum)`, which the transaction would revert with.
 */
export function belowMinimumError(
  decode: DecodeContext,
  step: { functionName: 'deposit' | 'withdraw'; action: string },
  received: bigint,
  minimum: bigint,
): VaultError {
  const data = encodeErrorResult({
    abi: routerAbi,
    errorName: 'SlippageExceeded',
    args: [received, minimum],
  })
  return stepRevertError(decode, { ...step, contract: 'router' }, data)
}
