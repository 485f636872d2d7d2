import { type ChildProcess, spawn } from 'node:child_process'
import { once } from 'node:events'
import { request as httpRequest } from 'node:http'
import { StreamableHTTPClientTransport, Client as V2Client } from '@modelcontextprotocol/client'
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport as V1HttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { cliBin } from './runCli.js'

/** One line of the HTTP server's request log. */
export type RequestLogLine = {
  time: string
  http: string
  method: string | null
  tool: string | null
  status: number
  durationMs: number
  client: string
  refusal?: string
}

/** The built `x402-vault mcp --http`, running. */
export type HttpMcp = {
  /** `http://127.0.0.1:<port>` */
  origin: string
  /** The MCP endpoint: `<origin>/mcp`. */
  url: string
  child: ChildProcess
  /** Everything the server wrote to stderr so far. */
  stderr: () => string
  /** The request log's lines so far. */
  requests: () => RequestLogLine[]
  /**
   * Resolves with the first request log line that matches, once the server has written it: a line
   * comes through a pipe, so it may arrive after the client has its answer.
   */
  untilRequest: (
    matches: (line: RequestLogLine) => boolean,
    timeoutMs?: number,
  ) => Promise<RequestLogLine>
  /** Sends `signal` (SIGTERM by default) and resolves with the exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

/**
 * Starts the built CLI as `x402-vault mcp --http --port 0 [...args]` with exactly `env`, and waits
 * until it listens.
 */
export async function startHttpMcp(
  env: Record<string, string>,
  args: string[] = [],
): Promise<HttpMcp> {
  const child = spawn(process.execPath, [cliBin, 'mcp', '--http', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  })
  let stderr = ''
  child.stderr?.setEncoding('utf8')
  const port = await new Promise<number>((resolve, reject) => {
    child.stderr?.on('data', (chunk: string) => {
      stderr += chunk
      const listening = /at POST \/mcp on 127\.0\.0\.1:(\d+),/.exec(stderr)
      if (listening?.[1]) resolve(Number(listening[1]))
    })
    child.once('exit', (code) => reject(new Error(`the server exited (${code}): ${stderr}`)))
  })
  const origin = `http://127.0.0.1:${port}`
  const requests = () =>
    stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as RequestLogLine)
  return {
    origin,
    url: `${origin}/mcp`,
    child,
    stderr: () => stderr,
    requests,
    untilRequest(matches, timeoutMs = 10_000) {
      return new Promise((resolve, reject) => {
        const look = () => {
          const line = requests().find(matches)
          if (!line) return
          clearTimeout(timer)
          child.stderr?.off('data', look)
          resolve(line)
        }
        const timer = setTimeout(() => {
          child.stderr?.off('data', look)
          reject(new Error(`no such request log line within ${timeoutMs} ms`))
        }, timeoutMs)
        child.stderr?.on('data', look)
        look()
      })
    },
    async stop(signal = 'SIGTERM') {
      if (child.exitCode !== null) return child.exitCode
      const exited = once(child, 'exit')
      child.kill(signal)
      const [code] = (await exited) as [number | null]
      return code
    },
  }
}

/** The MCP clients the HTTP server must serve: the v1 SDK's, and the v2 SDK's in both eras. */
export type HttpClientKind = 'v1' | 'v2' | 'v2-modern'

/** What the tests call on any of them. */
export type HttpClient = {
  kind: HttpClientKind
  client: V1Client | V2Client
  close: () => Promise<void>
}

/**
 * Connects a real MCP client over Streamable HTTP: the v1 SDK's `Client` (2025-era handshake), the v2
 * SDK's (its default, the 2025-era handshake too) or the v2 SDK's pinned to the 2026-07-28 revision
 * (`server/discover`, no handshake).
 */
export async function connectHttp(
  url: string,
  kind: HttpClientKind,
  headers: Record<string, string> = {},
): Promise<HttpClient> {
  const info = { name: `x402-vault-tests-${kind}`, version: '1.0.0' }
  if (kind === 'v1') {
    const client = new V1Client(info)
    await client.connect(new V1HttpTransport(new URL(url), { requestInit: { headers } }))
    return { kind, client, close: () => client.close() }
  }
  const client = new V2Client(
    info,
    kind === 'v2-modern' ? { versionNegotiation: { mode: { pin: '2026-07-28' } } } : {},
  )
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  )
  return { kind, client, close: () => client.close() }
}

/** POSTs one JSON-RPC message (or any body) to the endpoint, with the headers a client sends. */
export function postMcp(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  init: RequestInit = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    ...init,
  })
}

/** The JSON-RPC message of a response, whether it came as JSON or as one SSE event. */
export async function rpcAnswer(response: Response): Promise<Record<string, unknown>> {
  const text = await response.text()
  if (response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const data = text
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => line.slice(6))
    return JSON.parse(data.at(-1) ?? 'null')
  }
  return JSON.parse(text)
}

/**
 * POSTs one JSON-RPC message to `<origin>/mcp` through node:http, which (unlike fetch) lets the
 * caller set `Host`, as a page reached through DNS rebinding sends it.
 */
export function rawPost(
  origin: string,
  headers: Record<string, string>,
  body: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(
      `${origin}/mcp`,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
        // A connection of its own: a server that refuses a request before reading its body may close
        // the connection after answering (workerd does), and a kept-alive one would then fail the next.
        agent: false,
      },
      (incoming) => {
        let text = ''
        incoming.setEncoding('utf8')
        incoming.on('data', (chunk: string) => {
          text += chunk
        })
        incoming.on('end', () => resolve({ status: incoming.statusCode ?? 0, body: text }))
      },
    )
    outgoing.on('error', reject)
    outgoing.end(JSON.stringify(body))
  })
}
