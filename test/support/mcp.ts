import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { serializeMessage } from '@modelcontextprotocol/sdk/shared/stdio.js'
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js'
import { type JSONRPCMessage, JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js'
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'
import { expect } from 'vitest'
import { cliBin } from '../../harness/runCli.js'

/** The built MCP bin: the tests run what `npx x402-vault@beta mcp` runs. */
export const mcpBin = join(import.meta.dirname, '../../dist/mcp/bin.js')

export type McpSession = {
  client: Client
  /** Everything the server wrote to stderr so far. */
  stderr: () => string
  close: () => Promise<void>
}

/**
 * Spawns the built MCP server (or `x402-vault mcp`, or `x402-vault` with `cliArgs`) with exactly
 * `env` and connects a real MCP client to it over stdio.
 */
export async function connectMcp(
  env: Record<string, string>,
  options: { viaCli?: boolean; cliArgs?: string[] } = {},
): Promise<McpSession> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: options.viaCli ? [cliBin, ...(options.cliArgs ?? ['mcp'])] : [mcpBin],
    env,
    stderr: 'pipe',
  })
  return connectStdio(transport)
}

/**
 * Connects a real MCP client over `transport` (made with `stderr: 'pipe'`), keeping what the server
 * writes to stderr. A server that does not start rejects with that stderr in the message.
 *
 * @example
 * const { client, close } = await connectStdio(new StdioClientTransport({ command: 'npx', … }))
 */
export async function connectStdio(transport: StdioClientTransport): Promise<McpSession> {
  let stderr = ''
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8')
  })
  const client = new Client({ name: 'x402-vault-tests', version: '1.0.0' })
  await client.connect(transport).catch((error: Error) => {
    throw new Error(`${error.message}; the server wrote to stderr:\n${stderr}`)
  })
  return { client, stderr: () => stderr, close: () => client.close() }
}

/**
 * A stdio client transport that keeps every line the server writes to stdout, so that a test can
 * check that stdout carries nothing but JSON-RPC. A line that is not a JSON-RPC message is kept,
 * reported to `onerror` and not delivered.
 */
export class RecordingStdioTransport implements Transport {
  /** Every stdout line so far, in order, without its newline. */
  readonly stdoutLines: string[] = []
  stderr = ''
  onmessage?: (message: JSONRPCMessage) => void
  onerror?: (error: Error) => void
  onclose?: () => void
  private child: ChildProcessWithoutNullStreams | undefined
  private partialLine = ''

  constructor(
    private readonly args: string[],
    private readonly env: Record<string, string>,
  ) {}

  async start(): Promise<void> {
    const child = spawn(process.execPath, this.args, { env: this.env })
    this.child = child
    child.stdout.setEncoding('utf8')
    child.stdout.on('data', (chunk: string) => {
      const lines = (this.partialLine + chunk).split('\n')
      this.partialLine = lines.pop() ?? ''
      for (const line of lines) this.receive(line)
    })
    child.stderr.setEncoding('utf8')
    child.stderr.on('data', (chunk: string) => {
      this.stderr += chunk
    })
    child.on('error', (error) => this.onerror?.(error))
    child.on('close', () => this.onclose?.())
    await once(child, 'spawn')
  }

  async send(message: JSONRPCMessage): Promise<void> {
    this.child?.stdin.write(serializeMessage(message))
  }

  async close(): Promise<void> {
    const child = this.child
    if (!child || child.exitCode !== null) return
    const closed = once(child, 'close')
    child.stdin.end()
    await closed
  }

  private receive(line: string): void {
    this.stdoutLines.push(line)
    let message: JSONRPCMessage
    try {
      message = JSONRPCMessageSchema.parse(JSON.parse(line))
    } catch (error) {
      this.onerror?.(error as Error)
      return
    }
    this.onmessage?.(message)
  }
}

/** Any MCP client, of either SDK version: what the helpers below call. */
export type ToolCaller = {
  callTool: (params: { name: string; arguments?: Record<string, unknown> }) => Promise<unknown>
}

/** A tool's answer, read the way a client reads it. */
export type ToolAnswer = {
  isError: boolean
  text: string
  structured: Record<string, unknown> | undefined
}

export async function callTool(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown> = {},
): Promise<ToolAnswer> {
  const result = (await client.callTool({ name, arguments: args })) as {
    content: unknown
    isError?: boolean
    structuredContent?: unknown
  }
  const content = result.content as { type: string; text?: string }[]
  expect(content).toHaveLength(1)
  expect(content[0]?.type).toBe('text')
  return {
    isError: result.isError === true,
    text: content[0]?.text ?? '',
    structured: result.structuredContent as Record<string, unknown> | undefined,
  }
}

/** Calls a tool that must succeed; returns its structured content (the same JSON as its text). */
export async function callToolOk(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown> = {},
): Promise<Record<string, unknown>> {
  const answer = await callTool(client, name, args)
  expect(answer.isError, answer.text).toBe(false)
  expect(answer.structured).toBeDefined()
  expect(JSON.parse(answer.text)).toEqual(answer.structured)
  return answer.structured as Record<string, unknown>
}

/**
 * Calls a tool that must refuse: `isError`, the stable code in the text (with `(retryable)` when
 * expected), and nothing that looks like a stack trace or a file path.
 */
export async function callToolError(
  client: ToolCaller,
  name: string,
  args: Record<string, unknown>,
  code: string,
  options: { retryable?: boolean } = {},
): Promise<string> {
  const answer = await callTool(client, name, args)
  expect(answer.isError, answer.text).toBe(true)
  // Every refusal has one form: the stable code first, whatever rejected the call.
  expect(answer.text).toMatch(
    new RegExp(`^${code}${options.retryable ? ' \\(retryable\\)' : ''}: `),
  )
  if (!options.retryable) expect(answer.text).not.toContain('(retryable)')
  expectNoInternals(answer.text)
  return answer.text
}

/** No stack frame, source location or file path. */
export function expectNoInternals(text: string): void {
  expect(text).not.toMatch(
    /\n\s+at |\bat .+:\d+:\d+|\.(?:ts|js|mjs):\d+|\/(?:work|home|tmp|Users)\//,
  )
}

const validator = new AjvJsonSchemaValidator()

/** Checks a structured answer against the output schema the server lists for the tool. */
export function expectMatchesOutputSchema(
  outputSchema: Record<string, unknown> | undefined,
  structured: unknown,
): void {
  expect(outputSchema).toBeDefined()
  const result = validator.getValidator(outputSchema as never)(structured)
  expect(result.valid, result.errorMessage).toBe(true)
}

/**
 * Spawns a bin without an MCP client, writes `lines` to its stdin, and closes stdin once stdout has
 * `responses` JSON-RPC lines (at once when 0). Resolves with its output and exit code.
 */
export function runBin(
  args: string[],
  env: Record<string, string>,
  lines: string[] = [],
  responses = 0,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { env, stdio: ['pipe', 'pipe', 'pipe'] })
    let stdout = ''
    let stderr = ''
    const endWhenAnswered = () => {
      if (stdout.split('\n').filter(Boolean).length >= responses) child.stdin.end()
    }
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString('utf8')
      endWhenAnswered()
    })
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8')
    })
    child.on('error', reject)
    child.on('close', (code) => resolve({ code, stdout, stderr }))
    // A server that exits at once (a configuration error) closes its stdin first.
    child.stdin.on('error', () => {})
    for (const line of lines) child.stdin.write(`${line}\n`)
    endWhenAnswered()
  })
}
