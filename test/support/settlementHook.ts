import type { SettlementHookContext } from '../../src/index.js'

/**
 * An after-settle hook target like x402's resource server: it keeps the hooks registered on it, and
 * `settle(context)` calls them as x402 does after a settlement.
 */
export function hookTarget() {
  const hooks: ((context: SettlementHookContext) => Promise<void>)[] = []
  return {
    onAfterSettle(hook: (context: SettlementHookContext) => Promise<void>) {
      hooks.push(hook)
    },
    /** Calls the hooks as x402 does after a settlement (any context: the hook must cope). */
    settle: async (context: unknown) => {
      for (const hook of hooks) await hook(context as SettlementHookContext)
    },
  }
}
