import type { ToolAnnotations } from '@modelcontextprotocol/server'
import { z } from 'zod'
import { MAX_SLIPPAGE_BPS, vaultChainNames } from '../sdk/shared.js'
import { planWarning } from './json.js'

// Every builder below returns a new schema on each call: a schema object used twice would be
// turned into a JSON-Schema `$ref`, which several MCP clients cannot follow.

/** Every tool only reads the chain (plans are unsigned) and talks to a network outside the client. */
export const readOnlyAnnotations: ToolAnnotations = { readOnlyHint: true, openWorldHint: true }

// ---------------------------------------------------------------------------------------------
// Inputs: the schema checks types and keys, with messages that start with the stable code; the
// handlers check values (address, decimals, sign, cap) with the SDK's strict parsers.

/**
 * The input object of a tool: unknown keys are refused with a message naming the keys the tool takes.
 *
 * @param toolName - For the message.
 * @param shape - The input fields.
 * @returns A strict zod object.
 * @example
 * toolInput('vault_get_position', { wallet: walletInput() })
 */
export function toolInput<shape extends z.ZodRawShape>(toolName: string, shape: shape) {
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys'
        ? unknownArgumentsText(issue.keys, toolName, Object.keys(shape))
        : undefined,
  })
}

/**
 * The refusal of arguments a tool does not take.
 *
 * @param keys - The unknown keys.
 * @param toolName - The tool called.
 * @param accepted - The keys it takes; `undefined` when there is no such tool.
 * @returns Such as `INVALID_ARGUMENT: Unknown argument "amount": vault_get_position takes wallet. …`
 * @example
 * unknownArgumentsText(['amount'], 'vault_get_position', ['wallet'])
 */
export function unknownArgumentsText(
  keys: readonly string[],
  toolName: string,
  accepted: readonly string[] | undefined,
): string {
  const unknown = `Unknown argument ${echoKeys(keys)}`
  if (!accepted) return `INVALID_ARGUMENT: ${unknown}. Remove it and call again.`
  const takes = accepted.length ? `takes ${accepted.join(', ')}` : 'takes no arguments'
  return `INVALID_ARGUMENT: ${unknown}: ${toolName} ${takes}. Remove it and call again.`
}

/** The most of the unknown keys' names a refusal echoes: a huge key must not make a huge answer. */
const maxEchoedKeysLength = 256

/** The unknown keys, quoted and joined, cut to {@link maxEchoedKeysLength} characters. */
function echoKeys(keys: readonly string[]): string {
  let text = ''
  for (const [index, key] of keys.entries()) {
    text += `${index ? ', ' : ''}${JSON.stringify(key.slice(0, maxEchoedKeysLength))}`
    if (text.length > maxEchoedKeysLength) {
      return `${text.slice(0, maxEchoedKeysLength - 1)}… (cut; ${keys.length} unknown in all)`
    }
  }
  return text
}

/** The `wallet` input: a string; the handler checks the address. */
export function walletInput(description: string) {
  const message = 'INVALID_ADDRESS: wallet is required, as a string: 0x followed by 40 hex digits.'
  return z.string({ error: message }).describe(description)
}

/**
 * A decimal USDC amount input: a string; the handler parses it strictly and checks the cap. Without
 * a description, for {@link optionalInput} to describe.
 */
export function usdcInput(description?: string) {
  const message = `INVALID_AMOUNT: amountUsdc must be a decimal string such as "12.5" (a JSON string, not a number).`
  const missing = `INVALID_AMOUNT: amountUsdc is required: give the USDC amount as a decimal string such as "12.5".`
  const amount = z.string({ error: (issue) => (issue.input === undefined ? missing : message) })
  return description === undefined ? amount : amount.describe(description)
}

/**
 * An input a call may leave out: listed as required and nullable, as OpenAI's strict mode asks of
 * every tool, and taken when absent too. `null` means the same as leaving it out.
 */
export function optionalInput<schema extends z.ZodType>(schema: schema, description: string) {
  return schema.nullable().optional().describe(description)
}

/** The `shares` input: a string of share base units; the handler parses it. */
export function sharesInput(description: string) {
  const message = `INVALID_AMOUNT: shares must be a whole number of share base units as a string, such as "2500000", or null.`
  return optionalInput(z.string({ error: message }), description)
}

/** The optional `slippageBps` input: an integer from 0 to 1000, or null for the default. */
export function slippageInput(description: string) {
  const message = `INVALID_SLIPPAGE: slippageBps must be an integer from 0 to ${MAX_SLIPPAGE_BPS} (basis points; 10 = 0.1 %), or null (or left out) for the default of 10.`
  return optionalInput(
    z.number({ error: message }).int(message).min(0, message).max(MAX_SLIPPAGE_BPS, message),
    description,
  )
}

// ---------------------------------------------------------------------------------------------
// Outputs

/** The chain of every answer (base-sepolia in this beta). */
export function chainOutput() {
  return z.enum(vaultChainNames)
}

/** A value that could not be read: the rest of the answer is still valid. */
function unavailableOutput() {
  return z
    .object({
      unavailable: z.literal(true),
      code: z.string().describe('Stable code of what went wrong, such as MORPHO_UNREACHABLE.'),
      reason: z.string().describe('What went wrong, in words.'),
      errorName: z.string().optional().describe('The decoded Solidity error, when there is one.'),
    })
    .describe('This value could not be read right now; the rest of the answer is valid.')
}

/** A read value, or why it could not be read. */
export function field<schema extends z.ZodType>(schema: schema) {
  const union = z.union([schema, unavailableOutput()])
  return schema.description ? union.describe(schema.description) : union
}

/** A USDC amount: `{ usdc: '12.5', atomic: '12500000' }`. */
export function usdcOutput(description: string) {
  return z
    .object({
      usdc: z.string().describe('Decimal USDC, such as "12.5".'),
      atomic: z
        .string()
        .describe('The same amount in base units (6 decimals), such as "12500000".'),
    })
    .describe(description)
}

/** A bigint as a decimal string. */
export function integerOutput(description: string) {
  return z.string().describe(description)
}

/** An address (checksummed). */
export function addressOutput(description?: string) {
  return description === undefined ? z.string() : z.string().describe(description)
}

/** A rate: APY percentage and ray. */
export function rateOutput(description: string) {
  return z
    .object({
      apy: z.string().describe('Annual rate as a percentage, such as "4.50%".'),
      ray: z.string().describe('The same rate in ray (1e27 = 100 %), as the protocol reports it.'),
    })
    .describe(description)
}

/**
 * An unsigned transaction: what to send, from the wallet, to which contract. Its fields are the
 * usual ones (`to`, the calldata in `data`, `value` always "0"), so only `args` is described.
 */
export function transactionOutput(description: string) {
  return z
    .object({
      chain: chainOutput(),
      chainId: z.number().int(),
      to: addressOutput(),
      data: z.string(),
      value: z.literal('0'),
      functionName: z.enum(['initialize', 'approve', 'deposit', 'withdraw']),
      args: z.array(z.string()).describe('The arguments in order, numbers in base units.'),
    })
    .describe(description)
}

/** A plan's steps as one EIP-5792 `wallet_sendCalls` request. */
export function walletCallsOutput() {
  return z
    .object({
      version: z.literal('2.0.0').describe('The EIP-5792 request version.'),
      chainId: z.string().describe('The chain id in hex: "0x14a34" on Base Sepolia.'),
      from: addressOutput('The wallet that sends the batch.'),
      atomicRequired: z
        .literal(true)
        .describe('The steps only make sense together: the wallet must run all of them or none.'),
      calls: z
        .array(
          z.object({
            to: addressOutput('The contract to call.'),
            data: z.string().describe('The calldata, 0x-prefixed hex.'),
            value: z.literal('0x0').describe('ETH to send: always none.'),
          }),
        )
        .describe('Every step of the plan, in order.'),
    })
    .describe(
      'Every step, for a smart wallet (or an EIP-7702 account) to send in one request, all or nothing.',
    )
}

/** The structured warnings of a plan. */
export function planWarningsOutput() {
  return z
    .array(
      z.object({
        level: z
          .enum(['info', 'warning', 'error'])
          .describe(
            'info: worth knowing; warning: may fail if the chain moves first; error: will not succeed as it stands.',
          ),
        code: z.string().describe('Stable code, such as ORACLE_STALE or SLIPPAGE_WIDE.'),
        message: z.string().describe('What it means, in words.'),
      }),
    )
    .describe(
      'What could still go wrong or is worth knowing; empty when nothing is. A plan that cannot succeed is refused (isError) instead.',
    )
}

/** The fields every plan carries: the chain, the warnings, the transaction, its batch, and the next steps. */
export function planOutputShape(transactionDescription: string) {
  return {
    chain: chainOutput(),
    chainId: z.number().int().describe('84532 on Base Sepolia.'),
    warning: z.literal(planWarning),
    warnings: planWarningsOutput(),
    transaction: transactionOutput(transactionDescription),
    calls: walletCallsOutput(),
    nextSteps: z.string().describe('What to do with the plan, in plain words.'),
  }
}
