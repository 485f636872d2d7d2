import { VaultError } from '../errors/classes.js'
import { findCause } from '../errors/find.js'

/** How many of the buyer hooks' latest errors are kept for {@link findVaultError}. */
const keptErrors = 64

// Shared through the global symbol registry, as the write queue is: a second copy of this package in
// the process (another version, or a bundled one) finds the errors the first one threw.
const thrownKey = Symbol.for('x402-vault.buyerThrown')
const globals = globalThis as { [thrownKey]?: VaultError[] }
globals[thrownKey] ??= []
/** The errors the buyer's hooks threw lately, newest last. */
const thrown: VaultError[] = globals[thrownKey]

/**
 * Keeps an error a buyer hook is about to throw into x402, so that {@link findVaultError} can find it
 * again in the plain `Error` a transport rethrows in its place.
 */
export function rememberThrown(error: VaultError): void {
  const index = thrown.indexOf(error)
  if (index !== -1) thrown.splice(index, 1)
  thrown.push(error)
  if (thrown.length > keptErrors) thrown.splice(0, thrown.length - keptErrors)
}

/**
 * The `VaultError` behind an error: the error itself, one in its `cause` chain, or, for the plain
 * `Error` that x402's fetch wrapper throws in place of the buyer's error (`@x402/fetch` rethrows
 * whatever a payment hook threw as `new Error('Failed to create payment payload: ' + message)`, with no
 * `cause`), the error `vault.attachToClient` threw with that message. Tells `PaymentPolicyError`,
 * `PaymentFundingError` and `PaymentOutcomeError` apart, with their `code` and `details`, whichever
 * x402 transport carried them.
 *
 * The buyer's latest 64 errors are kept for this; errors of identical message carry the same facts,
 * and the latest one is returned.
 *
 * @param error - What a paying call threw.
 * @returns The `VaultError`, or `undefined` when the error is not one of this package's.
 * @example
 * try {
 *   await pay('https://api.example.com/paid')
 * } catch (error) {
 *   const vaultError = findVaultError(error)
 *   if (vaultError instanceof PaymentPolicyError) console.log('refused by policy:', vaultError.details.cap)
 *   else if (vaultError?.code === 'PAYMENT_ALREADY_SETTLED') console.log('already paid for')
 * }
 */
export function findVaultError(error: unknown): VaultError | undefined {
  const inChain = findCause<VaultError>(error, isVaultError)
  if (inChain) return inChain
  const message = error instanceof Error ? error.message : undefined
  if (typeof message !== 'string') return undefined
  for (let index = thrown.length - 1; index >= 0; index--) {
    const candidate = thrown[index] as VaultError
    if (message === candidate.message || message.endsWith(`: ${candidate.message}`)) {
      return candidate
    }
  }
  return undefined
}

/** A `VaultError` of this copy of the package, or of another one (by its fields: `instanceof` fails). */
function isVaultError(candidate: Error & Record<string, unknown>): boolean {
  return (
    candidate instanceof VaultError ||
    (typeof candidate.code === 'string' &&
      typeof candidate.category === 'string' &&
      typeof candidate.retryable === 'boolean' &&
      typeof candidate.details === 'object')
  )
}
