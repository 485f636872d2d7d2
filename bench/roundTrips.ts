import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { writeAddressesFile } from '../harness/addressesFile.js'
import { startCountingProxy } from '../harness/countingProxy.js'
import type { McpToolName } from '../harness/mcpToolNames.js'
import type { BenchContext } from './context.js'

/** HTTP requests to the RPC: the server's start-up verification, and each tool's worst call. */
export type RpcRoundTrips = { startup: number } & Record<McpToolName, number>

/** The round trips and, for each, the JSON-RPC methods they carried (batches flattened). */
export type RoundTripsResult = {
  rpcRoundTrips: RpcRoundTrips
  rpcMethods: Record<keyof RpcRoundTrips, string[]>
}

/**
 * Counts the RPC round trips of the real MCP server: the built bin over stdio, an MCP client, and a
 * counting HTTP proxy in front of the devnet that sees every request the server makes. Start-up is
 * everything from the spawn to the log line of a verified deployment; each tool is called with
 * arguments that take its full path (a deposit that is simulated, withdrawals by amount and by
 * shares), and its worst sample counts.
 *
 * @param ctx - The devnet, the prepared merchant wallet, the sample count.
 * @returns The round trips per tool and start-up, with their methods.
 * @example
 * const { rpcRoundTrips } = await measureRoundTrips(ctx)
 */
export async function measureRoundTrips(ctx: BenchContext): Promise<RoundTripsResult> {
  const samples = ctx.smoke ? 1 : 10
  const proxy = await startCountingProxy(ctx.devnet.rpcUrl)
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ctx.distDir, 'mcp/bin.js')],
    env: {
      BASE_SEPOLIA_RPC_URL: proxy.url,
      VAULT_ADDRESSES: await writeAddressesFile(ctx.devnet),
      MCP_LOG_LEVEL: 'info',
    },
    stderr: 'pipe',
  })
  const verified = verificationLogged(transport)
  const client = new Client({ name: 'x402-vault-bench', version: '1.0.0' })
  try {
    ctx.progress('round trips: start-up verification')
    await client.connect(transport)
    await verified
    const rpcRoundTrips = { startup: proxy.requests } as RpcRoundTrips
    const rpcMethods = { startup: [...proxy.methods] } as RoundTripsResult['rpcMethods']

    const wallet = ctx.wallet
    const calls: [McpToolName, Record<string, unknown>][] = [
      ['vault_status', {}],
      ['vault_check_yield', {}],
      ['vault_get_position', { wallet }],
      ['vault_plan_approve_usdc', { wallet, amountUsdc: '25' }],
      ['vault_plan_deposit', { wallet, amountUsdc: '25' }],
      ['vault_plan_withdraw', { wallet, amountUsdc: '25' }],
      ['vault_plan_withdraw', { wallet, shares: '25000000' }],
    ]
    for (const [name, args] of calls) {
      ctx.progress(`round trips: ${name} ${JSON.stringify(args)}`)
      for (let sample = 0; sample < samples; sample++) {
        const { result, requests, methods } = await proxy.measure(() =>
          client.callTool({ name, arguments: args }),
        )
        // A refusal takes a shorter path: its count would flatter the tool.
        if (result.isError) throw new Error(`${name} refused: ${JSON.stringify(result.content)}`)
        if (requests >= (rpcRoundTrips[name] ?? 0)) {
          rpcRoundTrips[name] = requests
          rpcMethods[name] = methods
        }
      }
    }
    return { rpcRoundTrips, rpcMethods }
  } finally {
    await client.close()
    await proxy.close()
  }
}

/** Resolves when the server logs a verified deployment; rejects when it logs that it could not. */
function verificationLogged(transport: StdioClientTransport): Promise<void> {
  return new Promise((resolve, reject) => {
    let log = ''
    transport.stderr?.on('data', (chunk: Buffer) => {
      log += chunk.toString('utf8')
      if (log.includes('Verified the vault deployment')) resolve()
      if (/Could not verify|failed verification/.test(log)) {
        reject(new Error(`the MCP server could not verify the devnet deployment: ${log}`))
      }
    })
  })
}
