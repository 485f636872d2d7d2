/**
 * A body over the size limit is a malformed answer: retried, then `RPC_BAD_RESPONSE`. The fault comes
 * from a real local HTTP server, not msw: viem cancels an oversized body, and msw's mocked bodies never
 * finish cancelling.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { createPublicClient } from 'viem'
import { getChainId } from 'viem/actions'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { vaultHttp } from '../../src/index.js'
import { toVaultError } from '../../src/sdk/errors/toVaultError.js'
import { expectVaultError } from '../support/expectVaultError.js'

/** How many of the next requests get a body over 1,000 bytes; the others get chain id 84532. */
let oversized = 0
let served = 0
const server = createServer(async (request, response) => {
  let text = ''
  for await (const chunk of request) text += chunk
  const { id } = JSON.parse(text) as { id: number }
  served++
  const result = oversized-- > 0 ? `0x${'00'.repeat(1_000)}` : '0x14a34'
  response.setHeader('Content-Type', 'application/json')
  response.end(JSON.stringify({ jsonrpc: '2.0', id, result }))
})
let url = ''

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/SECRETKEY`
})
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())))

function chainIdOver(retryCount: number) {
  const client = createPublicClient({
    transport: vaultHttp(url, { retryCount, retryDelay: 10, maxResponseBodySize: 1_000 }),
  })
  return getChainId(client).catch((error: unknown) => {
    throw toVaultError(error, { action: 'Chain id read' })
  })
}

describe('a body over the size limit', () => {
  it('is retried, then the answer is read', async () => {
    oversized = 1
    served = 0
    expect(await chainIdOver(1)).toBe(84532)
    expect(served).toBe(2)
  })

  it('persistently: RPC_BAD_RESPONSE, retryable, without the URL path', async () => {
    oversized = 3
    served = 0
    const error = await expectVaultError(chainIdOver(2), 'RPC_BAD_RESPONSE')
    expect(error.retryable).toBe(true)
    expect(served).toBe(3)
    expect(error.message).not.toContain('SECRETKEY')
  })
})
