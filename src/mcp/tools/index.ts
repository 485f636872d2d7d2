import type { AnyVaultTool } from '../tool.js'
import { vaultCheckYield } from './vaultCheckYield.js'
import { vaultGetPosition } from './vaultGetPosition.js'
import { vaultPlanApproveUsdc } from './vaultPlanApproveUsdc.js'
import { vaultPlanDeposit } from './vaultPlanDeposit.js'
import { vaultPlanWithdraw } from './vaultPlanWithdraw.js'
import { vaultStatus } from './vaultStatus.js'

/**
 * The registry of the server's tools, in the order `tools/list` shows them: the reads, then the
 * plans. A new tool is one file in this folder and one line here; test/howToAdd.test.ts names the
 * other parts it needs (its docs row, its tests, its bench row, the bundle's manifest).
 */
export const vaultTools: readonly AnyVaultTool[] = [
  vaultStatus,
  vaultCheckYield,
  vaultGetPosition,
  vaultPlanApproveUsdc,
  vaultPlanDeposit,
  vaultPlanWithdraw,
]

export {
  vaultCheckYield,
  vaultGetPosition,
  vaultPlanApproveUsdc,
  vaultPlanDeposit,
  vaultPlanWithdraw,
  vaultStatus,
}
