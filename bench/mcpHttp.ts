import { writeAddressesFile } from '../harness/addressesFile.js'
import { type RpcCall, startCountingProxy } from '../harness/countingProxy.js'
import { startHttpMcp } from '../harness/mcpHttp.js'
import type { BenchContext } from './context.js'
import { percentile, roundMs } from './stats.js'

/**
 * How the server is run: `bearer`, private, every request with the token; `public` (`--public`),
 * without a token, each client by its own `X-Forwarded-For` address under the default rate limits.
 */
export type McpHttpMode = 'bearer' | 'public'

/** The MCP server over Streamable HTTP with many clients at once. */
export type McpHttpLoad = {
  mode: McpHttpMode
  /** Clients calling at once, each one request at a time. */
  clients: number
  /** Requests per client in each phase. */
  requestsPerClient: number
  toolsList: {
    /** The server's own time per request (its request log), the budget's measure. */
    serverP50Ms: number
    /** As the clients saw it: with every client's request in flight, mostly the wait in line. */
    clientP50Ms: number
  }
  readTool: {
    tool: 'vault_status'
    /** As the clients saw it. */
    p50Ms: number
    /** The same JSON-RPC request sent straight to the RPC by as many clients at once. */
    rpcP50Ms: number
    /** `p50Ms` / `rpcP50Ms`. */
    ratio: number
  }
}

const protocolVersion = '2025-11-25'
const headers = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
  'mcp-protocol-version': protocolVersion,
}
const token = 'bench-token-0123456789abcdef0123456789'

/**
 * Loads the built `x402-vault mcp --http` with 50 concurrent clients (each initialised, then sending
 * one request at a time): `tools/list`, then `vault_status`. The read tool is compared with its own
 * RPC round trip: the JSON-RPC request it sends (seen through a proxy), sent straight to the same
 * proxy by 50 clients at once. In `public` mode the server runs with its default rate limits (600 a
 * minute per client, 6,000 in all), which the run stays within, so that every check runs as deployed.
 *
 * @param ctx - The devnet and the sample count (20 requests per client, or 3 in a smoke run).
 * @param mode - `bearer` (the token on every request) or `public`.
 * @returns The medians and the ratio.
 * @example
 * const { toolsList, readTool } = await measureMcpHttp(ctx, 'public')
 */
export async function measureMcpHttp(
  ctx: BenchContext,
  mode: McpHttpMode = 'bearer',
): Promise<McpHttpLoad> {
  const clients = 50
  const requestsPerClient = ctx.smoke ? 3 : 20
  const warmUpPerClient = ctx.smoke ? 0 : 5
  const proxy = await startCountingProxy(ctx.devnet.rpcUrl)
  const server = await startHttpMcp(
    {
      PATH: process.env.PATH ?? '',
      BASE_SEPOLIA_RPC_URL: proxy.url,
      VAULT_ADDRESSES: await writeAddressesFile(ctx.devnet),
      MCP_LOG_LEVEL: 'info',
      VAULT_MCP_MAX_CONCURRENT: String(clients * 2),
      ...(mode === 'bearer'
        ? { VAULT_MCP_HTTP_TOKEN: token, VAULT_MCP_RATE_LIMIT: '1000000' }
        : { VAULT_MCP_ALLOWED_HOSTS: '127.0.0.1', VAULT_MCP_TRUST_PROXY: 'x-forwarded-for' }),
    },
    mode === 'public' ? ['--public'] : [],
  )
  // Each client as the server tells it apart: by the token's bearer (all alike), or by the address
  // its proxy wrote (one per client, from the benchmarking range 198.18.0.0/15).
  const clientHeaders = (client: number): Record<string, string> =>
    mode === 'bearer'
      ? { ...headers, authorization: `Bearer ${token}` }
      : { ...headers, 'x-forwarded-for': `198.18.0.${client + 1}` }
  try {
    const post = async (body: object, client = 0): Promise<number> => {
      const started = performance.now()
      const response = await fetch(server.url, {
        method: 'POST',
        headers: clientHeaders(client),
        body: JSON.stringify(body),
      })
      const text = await response.text()
      if (response.status !== 200 || text.includes('"isError":true')) {
        throw new Error(`HTTP ${response.status}: ${text.slice(0, 300)}`)
      }
      return performance.now() - started
    }
    ctx.progress(`MCP over HTTP (${mode}): ${clients} clients initialise`)
    await Promise.all(
      Array.from({ length: clients }, (_, client) =>
        post(
          {
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: {
              protocolVersion,
              capabilities: {},
              clientInfo: { name: `bench-${client}`, version: '1.0.0' },
            },
          },
          client,
        ),
      ),
    )
    const status = { jsonrpc: '2.0', method: 'tools/call', params: { name: 'vault_status' } }
    // The read tool's own RPC request, as the proxy sees it (one batch, see the round-trip rows).
    let seen: RpcCall[] | undefined
    proxy.setInterceptor((calls) => {
      seen ??= calls
      return undefined
    })
    await post({ ...status, id: 1 })
    proxy.setInterceptor(undefined)
    if (!seen) throw new Error('vault_status sent no RPC request')
    const rpcBody = seen.map((call, id) => ({ jsonrpc: '2.0', id, ...call }))
    const rpcOnce = async (): Promise<number> => {
      const started = performance.now()
      const response = await fetch(proxy.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(rpcBody.length === 1 ? rpcBody[0] : rpcBody),
      })
      await response.text()
      return performance.now() - started
    }

    /** Every client sends `count` requests, one at a time; all clients at once. */
    const load = async (
      send: (id: number, client: number) => Promise<number>,
      count = requestsPerClient,
    ): Promise<number[]> => {
      const times: number[] = []
      await Promise.all(
        Array.from({ length: clients }, async (_, client) => {
          for (let request = 0; request < count; request++) {
            times.push(await send(client * 1000 + request + 2, client))
          }
        }),
      )
      return times
    }
    ctx.progress(`MCP over HTTP (${mode}): tools/list, ${clients} clients at once`)
    const logged = server.requests().length
    const listTimes = await load((id, client) =>
      post({ jsonrpc: '2.0', id, method: 'tools/list' }, client),
    )
    const listServerTimes = server
      .requests()
      .slice(logged)
      .filter((line) => line.method === 'tools/list')
      .map((line) => line.durationMs)
    ctx.progress(
      `MCP over HTTP (${mode}): vault_status and its RPC request, ${clients} clients at once`,
    )
    // A warm-up round first, not counted: tools/list is answered from its first answer, so the tool
    // call's code is still cold (not yet optimised by V8) when this phase begins.
    await load((id, client) => post({ ...status, id }, client), warmUpPerClient)
    const readTimes = await load((id, client) => post({ ...status, id }, client))
    const rpcTimes = await load(rpcOnce)
    const p50Ms = percentile(readTimes, 50)
    const rpcP50Ms = percentile(rpcTimes, 50)
    return {
      mode,
      clients,
      requestsPerClient,
      toolsList: {
        serverP50Ms: roundMs(percentile(listServerTimes, 50)),
        clientP50Ms: roundMs(percentile(listTimes, 50)),
      },
      readTool: {
        tool: 'vault_status',
        p50Ms: roundMs(p50Ms),
        rpcP50Ms: roundMs(rpcP50Ms),
        ratio: Math.round((p50Ms / rpcP50Ms) * 100) / 100,
      },
    }
  } finally {
    await server.stop()
    await proxy.close()
  }
}
