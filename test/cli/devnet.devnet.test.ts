import { spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { createPublicClient, http } from 'viem'
import { expect, it } from 'vitest'
import { vaultAddressKeys } from '../../src/sdk/chains.js'
import { cliBin } from '../support/runCli.js'
import { tempFolder } from '../support/tempFolder.js'

it('`x402-vault devnet` prints the env lines, serves until SIGINT, then shuts down cleanly', async () => {
  const dir = await tempFolder('x402-vault-cli-')
  const addressesPath = join(dir, 'addresses.json')
  const child = spawn(process.execPath, [cliBin, 'devnet', '--addresses', addressesPath], {
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))

  const env: Record<string, string> = {}
  const lines: string[] = []
  for await (const line of createInterface({ input: child.stdout })) {
    lines.push(line)
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line)
    if (match?.[1] && match[2] !== undefined) env[match[1]] = match[2]
    if (line.startsWith('BUYER_PRIVATE_KEY=')) break
  }

  expect(Object.keys(env)).toEqual([
    'BASE_SEPOLIA_RPC_URL',
    'VAULT_CHAIN',
    'VAULT_ADDRESSES',
    'X402_FACILITATOR_URL',
    'MERCHANT_ADDRESS',
    'MERCHANT_PRIVATE_KEY',
    'BUYER_ADDRESS',
    'BUYER_PRIVATE_KEY',
  ])
  expect(lines.some((line) => /DEVNET ONLY/.test(line))).toBe(true)
  expect(env.VAULT_ADDRESSES).toBe(addressesPath)
  const file = JSON.parse(await readFile(addressesPath, 'utf8'))
  expect(file).toMatchObject({ chain: 'base-sepolia', chainId: 84532 })
  for (const key of vaultAddressKeys) expect(file[key]).toMatch(/^0x[0-9a-fA-F]{40}$/)

  const rpcUrl = env.BASE_SEPOLIA_RPC_URL as string
  const client = createPublicClient({ transport: http(rpcUrl, { retryCount: 0 }) })
  expect(await client.getChainId()).toBe(84532)
  const supported = await fetch(`${env.X402_FACILITATOR_URL}/supported`)
  expect(supported.status).toBe(200)

  child.kill('SIGINT')
  expect(await exited).toBe(0)
  await expect(client.getChainId()).rejects.toThrow()
  await expect(fetch(`${env.X402_FACILITATOR_URL}/supported`)).rejects.toThrow()
})
