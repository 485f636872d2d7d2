/** The MCP server's tools, as `tools/list` shows them: three reads, three plans. */
export const mcpToolNames = [
  'vault_status',
  'vault_check_yield',
  'vault_get_position',
  'vault_plan_approve_usdc',
  'vault_plan_deposit',
  'vault_plan_withdraw',
] as const

export type McpToolName = (typeof mcpToolNames)[number]

/** The read tools: one RPC round trip each. The others are plans: at most two. */
export const readToolNames: readonly McpToolName[] = mcpToolNames.slice(0, 3)
