import { sweepObservers } from '../sdk/shared.js'
import type { CreatePaywallOptions } from './paywallOptions.js'
import type { PaywallReport } from './paywallSettlements.js'

/**
 * Tells the seller of a problem with a buyer's payment or the facilitator: in the log (x402 logs
 * nothing for it) and, with the sweeper on, to `onNonFatalError`.
 *
 * @param sweep - `createPaywall`'s `sweep`: its `onNonFatalError`, or `false`.
 * @returns The report the paywall's parts call with a phase and a `VaultError`.
 * @example
 * const report = paywallReporter(options.sweep)
 * report('facilitator', error)
 */
export function paywallReporter(sweep: CreatePaywallOptions['sweep']): PaywallReport {
  const observers = sweep === false ? undefined : sweepObservers(sweep ?? {})
  return (phase, error) => {
    console.warn(`x402-vault: ${error.message}`)
    observers?.problem(phase, error, false)
  }
}
