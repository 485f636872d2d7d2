import type { PaymentHookTarget } from '../src/index.js'

/**
 * Times each payment's wait in `attachToClient`'s hook, from a hook registered before `attach` runs to one
 * registered after it: x402 runs a payment's `onBeforePaymentCreation` hooks in order, with one
 * context object.
 *
 * @param client - The x402 client `attach` attaches to.
 * @param attach - Attaches the vault (`vault.attachToClient(client, …)`).
 * @returns What `attach` returned, and each wait as `[start, end]` (`performance.now()`), in the
 *   order the waits ended; `waits` may be emptied between phases.
 * @example
 * const { attached, waits } = timeHookWaits(client, () => vault.attachToClient(client))
 */
export function timeHookWaits<T>(
  client: PaymentHookTarget,
  attach: () => T,
): { attached: T; waits: [number, number][] } {
  const started = new WeakMap<object, number>()
  const waits: [number, number][] = []
  client.onBeforePaymentCreation(async (context) => {
    started.set(context, performance.now())
  })
  const attached = attach()
  client.onBeforePaymentCreation(async (context) => {
    const start = started.get(context)
    if (start !== undefined) waits.push([start, performance.now()])
  })
  return { attached, waits }
}

/** How long a wait of {@link timeHookWaits} took, in ms. */
export const waitMs = ([start, end]: [number, number]): number => end - start
