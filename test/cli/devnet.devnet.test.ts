import { type ChildProcess, spawn } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { createPublicClient, http } from 'viem'
import { expect, it } from 'vitest'
import { cliBin } from '../../harness/runCli.js'
import { tempFolder } from '../../harness/tempFolder.js'
import { vaultAddressKeys } from '../../src/sdk/chains.js'

/** Starts `x402-vault devnet` with `args` in `cwd`, and reads the env lines it prints. */
async function startDevnetCli(args: string[], cwd?: string) {
  const child: ChildProcess = spawn(process.execPath, [cliBin, 'devnet', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd === undefined ? {} : { cwd }),
  })
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve))
  const env: Record<string, string> = {}
  const lines: string[] = []
  for await (const line of createInterface({ input: child.stdout as NodeJS.ReadableStream })) {
    lines.push(line)
    const match = /^([A-Z0-9_]+)=(.*)$/.exec(line)
    if (match?.[1] && match[2] !== undefined) env[match[1]] = match[2]
    if (line.startsWith('BUYER_PRIVATE_KEY=')) break
  }
  return { child, exited, env, lines }
}

it('`x402-vault devnet` prints the env lines, serves until SIGINT, then shuts down cleanly', async () => {
  const dir = await tempFolder('x402-vault-cli-')
  const addressesPath = join(dir, 'addresses.json')
  const { child, exited, env, lines } = await startDevnetCli(['--addresses', addressesPath])

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

it('two devnets started in one folder, one per chain, each write and name their own addresses file', async () => {
  const dir = await tempFolder('x402-vault-cli-two-')
  const sepolia = await startDevnetCli(['--no-facilitator'], dir)
  const base = await startDevnetCli(['--chain', 'base', '--no-facilitator'], dir)
  try {
    expect(sepolia.env.VAULT_ADDRESSES).toBe(join(dir, '.devnet/base-sepolia.addresses.json'))
    expect(base.env.VAULT_ADDRESSES).toBe(join(dir, '.devnet/base.addresses.json'))
    // Each file still describes its own devnet after the other started.
    for (const [started, chain, chainId, rpc] of [
      [sepolia, 'base-sepolia', 84532, 'BASE_SEPOLIA_RPC_URL'],
      [base, 'base', 8453, 'BASE_MAINNET_RPC_URL'],
    ] as const) {
      const file = JSON.parse(await readFile(started.env.VAULT_ADDRESSES as string, 'utf8'))
      expect(file).toMatchObject({ chain, chainId })
      const client = createPublicClient({
        transport: http(started.env[rpc] as string, { retryCount: 0 }),
      })
      expect(await client.getChainId()).toBe(chainId)
      expect(await client.getCode({ address: file.router })).toMatch(/^0x[0-9a-f]{10,}/)
    }
  } finally {
    sepolia.child.kill('SIGINT')
    base.child.kill('SIGINT')
    expect(await sepolia.exited).toBe(0)
    expect(await base.exited).toBe(0)
  }
})
