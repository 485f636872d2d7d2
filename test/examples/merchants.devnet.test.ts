import { execFile } from 'node:child_process'
import { once } from 'node:events'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { x402ExactPermit2ProxyAddress } from '@x402/evm'
import { createPublicClient, type Hash, http } from 'viem'
import { afterAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { buyerFetch, paymentResponseOf } from '../../harness/merchantApps.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { tsxAsInstalled } from '../support/tsxAsInstalled.js'
import { spawnWatched, type WatchedProcess } from '../support/watchedProcess.js'

const root = join(import.meta.dirname, '../..')
const tsx = join(root, 'node_modules/.bin/tsx')

/**
 * Spawns `examples/<file>` with tsx and exactly `env` (and PATH), importing the built package as a
 * reader's app does ({@link tsxAsInstalled}).
 */
async function startExample(file: string, env: Record<string, string>): Promise<WatchedProcess> {
  return spawnWatched(file, tsx, [join(root, 'examples', file)], {
    cwd: root,
    env: { ...env, ...(await tsxAsInstalled()) },
  })
}

/** Where the settlement of a paid response went: the token itself (EIP-3009) or x402's Permit2 proxy. */
async function settlementTarget(devnet: Devnet, response: Response) {
  const client = createPublicClient({ chain: devnet.viemChain, transport: http(devnet.rpcUrl) })
  const tx = await client.getTransaction({ hash: paymentResponseOf(response).transaction as Hash })
  return tx.to?.toLowerCase()
}

/** Sends SIGTERM and resolves with the exit code. */
const stop = (example: WatchedProcess) => example.stop()

// Each test has a devnet of its own, and its processes mostly wait (on the chain, the facilitator,
// a sweep): the three run at once.
describe.concurrent('the merchant examples, against a devnet', () => {
  const started: Devnet[] = []
  const running: WatchedProcess[] = []
  afterAll(async () => {
    for (const example of running)
      if (example.child.exitCode === null) example.child.kill('SIGKILL')
    for (const devnet of started) await devnet.stop()
  })
  const devnetFor = async (chain: 'base' | 'base-sepolia', bearerToken?: string) => {
    const devnet = await startDevnet({ chain, facilitator: bearerToken ? { bearerToken } : true })
    started.push(devnet)
    return devnet
  }

  it('examples/express-merchant.ts on Base (mainnet configuration, facilitator bearer token): paid once, swept, closed on SIGTERM', async () => {
    const devnet = await devnetFor('base', 'example-token')
    const example = await startExample('express-merchant.ts', {
      BASE_MAINNET_RPC_URL: devnet.rpcUrl,
      MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
      X402_FACILITATOR_URL: devnet.facilitatorUrl as string,
      X402_FACILITATOR_BEARER_TOKEN: 'example-token',
      VAULT_ADDRESSES: await writeAddressesFile(devnet),
      PORT: '0',
      SWEEP_RESERVE_USDC: '100',
    })
    running.push(example)
    const [, port] = await example.waitFor(/^listening on http:\/\/localhost:(\d+)$/m)
    const response = await buyerFetch(devnet)(`http://127.0.0.1:${port}/weather`)
    expect(response.status).toBe(200)
    expect(await response.json()).toEqual({ sky: 'clear', celsius: 21 })
    expect(paymentResponseOf(response).network).toBe('eip155:8453')
    // Circle's USDC on Base: EIP-3009, settled by the token's transferWithAuthorization.
    expect(await settlementTarget(devnet, response)).toBe(devnet.addresses.usdc.toLowerCase())
    // 1,000 USDC of funding plus the 0.01 USDC payment, above the 100 USDC reserve.
    await example.waitFor(/^deposited 900\.01 USDC, kept 100 USDC: 0x[0-9a-f]{64}$/m)
    expect(await stop(example)).toBe(0)
    expect(example.stdout()).toMatch(/^closed$/m)
    expect(example.stderr()).toBe('')
  })

  it('examples/hono-node.ts on Base Sepolia (test network), then examples/sweep.ts by hand', async () => {
    const devnet = await devnetFor('base-sepolia')
    const env = {
      VAULT_CHAIN: 'base-sepolia',
      BASE_SEPOLIA_RPC_URL: devnet.rpcUrl,
      MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
      VAULT_ADDRESSES: await writeAddressesFile(devnet),
    }
    const example = await startExample('hono-node.ts', {
      ...env,
      X402_FACILITATOR_URL: devnet.facilitatorUrl as string,
      PORT: '0',
      SWEEP_RESERVE_USDC: '50',
    })
    running.push(example)
    const [, port] = await example.waitFor(/^listening on http:\/\/localhost:(\d+)$/m)
    const response = await buyerFetch(devnet)(`http://127.0.0.1:${port}/weather`)
    expect(response.status).toBe(200)
    expect(paymentResponseOf(response).network).toBe('eip155:84532')
    // Base Sepolia's USDC has no EIP-3009: the buyer (opted in to it) paid through Permit2.
    expect(await settlementTarget(devnet, response)).toBe(
      x402ExactPermit2ProxyAddress.toLowerCase(),
    )
    await example.waitFor(/^deposited 950\.01 USDC: 0x[0-9a-f]{64}$/m)
    expect(await stop(example)).toBe(0)
    expect(example.stdout()).toMatch(/^closed$/m)
    expect(example.stderr()).toBe('')

    // The wallet kept 50 USDC; a manual sweep with a 10 USDC reserve deposits the other 40.
    const { stdout } = await promisify(execFile)(tsx, [join(root, 'examples/sweep.ts')], {
      cwd: root,
      env: {
        PATH: process.env.PATH,
        ...env,
        SWEEP_RESERVE_USDC: '10',
        SWEEP_MIN_IDLE_USDC: '10',
        ...(await tsxAsInstalled()),
      },
    })
    expect(stdout).toMatch(/^balance 50 USDC, reserve 10 USDC, idle 40 USDC$/m)
    expect(stdout).toMatch(/^deposited 40 USDC: 0x[0-9a-f]{64}$/m)
  })

  it('an example started without its environment names the missing variable', async () => {
    const example = await startExample('express-merchant.ts', { MERCHANT_PRIVATE_KEY: '0x12' })
    running.push(example)
    const [code] = await once(example.child, 'exit')
    expect(code).not.toBe(0)
    expect(example.stderr()).toContain('Set BASE_MAINNET_RPC_URL.')
  })
})
