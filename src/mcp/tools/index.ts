import type { AnyVaultTool } from '../tool.js'
import { vaultCheckYield } from './vaultCheckYield.js'
import { vaultGetPosition } from './vaultGetPosition.js'
import { vaultPlanApproveUsdc } from './vaultPlanApproveUsdc.js'
import { vaultPlanDeposit } from './vaultPlanDeposit.js'
import { vaultPlanWithdraw } from './vaultPlanWithdraw.js'
import { vaultStatus } from './vaultStatus.js'

/** The six tools, in the order `tools/list` shows them: three reads, then three plans. */
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
