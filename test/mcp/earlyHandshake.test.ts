/**
 * The stdio server's early handshake: what it answers before the MCP SDK is loaded, and what it hands
 * over. The recording comes from the live server (recordHandshake runs the real SDK), not a fixture.
 */
import { PassThrough, type Readable } from 'node:stream'
import { SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server'
import { beforeAll, describe, expect, it } from 'vitest'
import { initializeRequest } from '../../harness/jsonLinesProcess.js'
import { answerHandshakeEarly } from '../../src/mcp/earlyHandshake.js'
import type { HandshakeRecording } from '../../src/mcp/handshakeRecording.js'
import { recordHandshake, serializeHandshake } from '../../src/mcp/recordHandshake.js'

let recording: HandshakeRecording
beforeAll(async () => {
  recording = await recordHandshake()
})

const line = (message: object) => `${JSON.stringify(message)}\n`
const initialize = (id: number | string, protocolVersion: string) =>
  line({
    jsonrpc: '2.0',
    id,
    method: 'initialize',
    params: { protocolVersion, capabilities: {}, clientInfo: { name: 'test', version: '1.0.0' } },
  })
const initialized = line({ jsonrpc: '2.0', method: 'notifications/initialized' })
const toolsList = (id: number | string) => line({ jsonrpc: '2.0', id, method: 'tools/list' })

/** Everything a stream yields until it ends. */
async function readAll(stream: Readable): Promise<string> {
  let text = ''
  for await (const chunk of stream) text += chunk
  return text
}

/** Runs the early handshake over `input` (written as the given chunks, then ended or left open). */
async function early(chunks: (string | Buffer)[], { end = false } = {}) {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  const written: string[] = []
  stdout.on('data', (chunk) => written.push(String(chunk)))
  const result = answerHandshakeEarly(stdin, stdout, serializeHandshake(recording))
  for (const chunk of chunks) stdin.write(chunk)
  if (end) stdin.end()
  const handed = await result
  const answers = written
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((text) => JSON.parse(text))
  return { handed, answers, stdin }
}

describe('answerHandshakeEarly', () => {
  it('the recording holds every supported version, each answered with itself, and every tool', () => {
    expect(Object.keys(recording.initialize)).toEqual([...SUPPORTED_PROTOCOL_VERSIONS])
    for (const [version, result] of Object.entries(recording.initialize)) {
      expect(result.protocolVersion, version).toBe(version)
      expect(result.serverInfo).toMatchObject({ name: 'x402-vault' })
    }
    expect((recording.toolsList.tools as unknown[]).length).toBe(6)
  })

  it.each([...SUPPORTED_PROTOCOL_VERSIONS])(
    'answers initialize (%s) and tools/list from the recording, then hands over every byte',
    async (version) => {
      const input = [initialize(1, version), initialized, toolsList('two')]
      const { handed, answers, stdin } = await early(input)
      expect(answers).toEqual([
        { jsonrpc: '2.0', id: 1, result: recording.initialize[version] },
        { jsonrpc: '2.0', id: 'two', result: recording.toolsList },
      ])
      expect(handed.closed).toBe(false)
      expect([...handed.answered.keys()]).toEqual([1, 'two'])
      // The whole server reads the session from its first byte, then what comes after.
      stdin.end(line({ jsonrpc: '2.0', id: 3, method: 'ping' }))
      expect(await readAll(handed.input)).toBe(
        `${input.join('')}${line({ jsonrpc: '2.0', id: 3, method: 'ping' })}`,
      )
    },
  )

  it('a line split across chunks, inside a multi-byte character, is read whole', async () => {
    const bytes = Buffer.from(
      line({
        ...initializeRequest,
        params: { ...initializeRequest.params, clientInfo: { name: 'clïent ✓', version: '1' } },
      }),
    )
    const cut = bytes.indexOf(Buffer.from('✓')) + 1
    const { answers, handed } = await early([
      bytes.subarray(0, cut),
      bytes.subarray(cut),
      toolsList(2),
    ])
    expect(answers.map((answer) => answer.id)).toEqual([1, 2])
    expect(handed.closed).toBe(false)
  })

  it.each([
    ['a version it does not support', [initialize(1, '2024-01-01')]],
    [
      'a 2026-07-28 opening',
      [line({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: {} })],
    ],
    [
      'initialize with a _meta envelope',
      [line({ ...initializeRequest, params: { ...initializeRequest.params, _meta: {} } })],
    ],
    [
      'initialize without clientInfo',
      [
        line({
          jsonrpc: '2.0',
          id: 1,
          method: 'initialize',
          params: { protocolVersion: '2025-06-18', capabilities: {} },
        }),
      ],
    ],
    [
      'a tool call first',
      [line({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'vault_status' } })],
    ],
    ['a line that is not JSON', ['{"jsonrpc":\n']],
    ['tools/list before initialize', [toolsList(1)]],
    [
      'tools/list with a cursor',
      [
        initialize(1, '2025-06-18'),
        toolsList(2).replace('"tools/list"', '"tools/list","params":{"cursor":"x"}'),
      ],
    ],
    ['an id used twice', [initialize(1, '2025-06-18'), toolsList(1)]],
  ])('hands over at once on %s, answering nothing it should not', async (_, input) => {
    const { handed, answers } = await early(input)
    expect(handed.closed).toBe(false)
    // Only a well-formed initialize before the odd line gets its early answer.
    expect(answers.every((answer) => answer.id === 1 && answer.result.protocolVersion)).toBe(true)
    expect(answers.length).toBeLessThanOrEqual(input.length - 1)
  })

  it('stdin that ends before anything needs the whole server: closed, nothing more to serve', async () => {
    const { handed, answers } = await early([initialize(1, '2025-06-18'), initialized], {
      end: true,
    })
    expect(handed.closed).toBe(true)
    expect(answers.map((answer) => answer.id)).toEqual([1])
  })
})
