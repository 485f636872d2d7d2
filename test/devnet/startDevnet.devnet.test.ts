import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPublicClient, createTestClient, erc20Abi, http, type PublicClient } from 'viem'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { resolveAnvilBinary, startAnvil } from '../../src/devnet/anvil.js'
import { DevnetError } from '../../src/devnet/errors.js'
import { type Devnet, startDevnet } from '../../src/devnet/startDevnet.js'
import { multicall3Address, vaultAddressKeys, vaultChains } from '../../src/sdk/chains.js'
import { devnetClients } from '../support/devnet.js'

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

describe('startDevnet', () => {
  const devnets: Devnet[] = []

  beforeAll(async () => {
    // Both chains at once: parallel devnets must not collide.
    devnets.push(
      ...(await Promise.all([
        startDevnet({ chain: 'base-sepolia' }),
        startDevnet({ chain: 'base' }),
      ])),
    )
  })
  afterAll(async () => {
    await Promise.all(devnets.map((devnet) => devnet.stop()))
  })

  it('runs each chain on its own loopback port with its chain id', async () => {
    const [sepolia, base] = devnets as [Devnet, Devnet]
    expect(new URL(sepolia.rpcUrl).hostname).toBe('127.0.0.1')
    expect(sepolia.rpcUrl).not.toBe(base.rpcUrl)
    for (const devnet of devnets) {
      const client = createPublicClient({ transport: http(devnet.rpcUrl) })
      expect(await client.getChainId()).toBe(vaultChains[devnet.chain].chainId)
      expect(devnet.chainId).toBe(vaultChains[devnet.chain].chainId)
      // Above viem's Multicall3 `blockCreated`, so chain-aware block-pinned multicalls work.
      const blockCreated = BigInt(
        vaultChains[devnet.chain].viemChain.contracts?.multicall3?.blockCreated ?? 0,
      )
      expect(await client.getBlockNumber()).toBeGreaterThan(blockCreated)
    }
  })

  it('deploys the whole stack, installs Multicall3 and funds the accounts', async () => {
    for (const devnet of devnets) {
      const client = createPublicClient({ chain: devnet.viemChain, transport: http(devnet.rpcUrl) })
      expect(await client.getCode({ address: multicall3Address })).toMatch(/^0x[0-9a-f]{20,}/)
      for (const key of vaultAddressKeys) {
        expect(await client.getCode({ address: devnet.addresses[key] }), key).toMatch(
          /^0x[0-9a-f]{20,}/,
        )
      }
      const [merchantUsdc, buyerUsdc] = await client.multicall({
        allowFailure: false,
        contracts: [devnet.accounts.merchant, devnet.accounts.buyer].map((account) => ({
          address: devnet.addresses.usdc,
          abi: erc20Abi,
          functionName: 'balanceOf' as const,
          args: [account.address] as const,
        })),
      })
      expect(merchantUsdc).toBe(1_000_000_000n)
      expect(buyerUsdc).toBe(1_000_000_000n)
      for (const account of Object.values(devnet.accounts)) {
        expect(await client.getBalance({ address: account.address })).toBeGreaterThan(10n ** 18n)
      }
    }
  })

  it('advances block time', async () => {
    const devnet = devnets[0] as Devnet
    const client = createPublicClient({ transport: http(devnet.rpcUrl) })
    const before = await client.getBlock()
    await devnet.advanceTime(3 * 24 * 3600)
    const after = await client.getBlock()
    expect(after.number).toBe(before.number + 1n)
    expect(after.timestamp - before.timestamp).toBeGreaterThanOrEqual(3n * 24n * 3600n)
  })
})

describe('a second devnet of the same chain and funding in one process', () => {
  it('starts from the first one’s deployed state: the same contracts, balances, blocks, logs and past states, then runs on wall-clock time', async () => {
    // A funding no other devnet of this worker has, so that the first one deploys.
    const fundUsdc = 4_321_000_000n
    const first = await startDevnet({ chain: 'base', fundUsdc })
    const deployedAt = await createPublicClient({ transport: http(first.rpcUrl) }).getBlock()
    // Into the next second of the wall clock: had the second devnet deployed again, its genesis and
    // every block after it would carry other timestamps, so other hashes.
    await new Promise((resolve) => setTimeout(resolve, 1_000 - (Date.now() % 1_000) + 10))
    const secondStarted = Math.floor(Date.now() / 1000)
    const second = await startDevnet({ chain: 'base', fundUsdc })
    try {
      expect(second.rpcUrl).not.toBe(first.rpcUrl)
      expect(second.addresses).toEqual(first.addresses)
      expect(second.tokens).toEqual(first.tokens)
      const [before, after] = [first, second].map((devnet) =>
        createPublicClient({ chain: devnet.viemChain, transport: http(devnet.rpcUrl) }),
      ) as [PublicClient, PublicClient]
      // Every block of the deployment, with its transactions' logs.
      expect((await after.getBlock({ blockNumber: deployedAt.number })).hash).toBe(deployedAt.hash)
      const genesis =
        BigInt(vaultChains.base.viemChain.contracts?.multicall3?.blockCreated ?? 0) + 1_000n
      const range = { fromBlock: genesis, toBlock: deployedAt.number }
      const logs = await after.getLogs(range)
      expect(logs.length).toBeGreaterThan(10)
      expect(logs).toEqual(await before.getLogs(range))
      // A past state: the merchant's USDC before it was funded, as an archive node answers it.
      const balanceAt = (client: PublicClient, blockNumber?: bigint) =>
        client.readContract({
          address: first.addresses.usdc,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [first.accounts.merchant.address],
          ...(blockNumber === undefined ? {} : { blockNumber }),
        })
      expect(await balanceAt(after, genesis + 1n)).toBe(0n)
      expect(await balanceAt(after)).toBe(fundUsdc)
      // One empty block on top, at the time it loaded: the chain goes on from the deployment on the
      // wall clock, where x402 authorizations are signed, and a snapshot taken at once and reverted
      // (which sets the clock back to the snapshot's block) keeps it there.
      const loaded = await after.getBlock()
      expect(loaded.number).toBe(deployedAt.number + 1n)
      expect(loaded.transactions).toEqual([])
      expect(Number(loaded.timestamp)).toBeGreaterThanOrEqual(secondStarted)
      const testClient = createTestClient({ mode: 'anvil', transport: http(second.rpcUrl) })
      const snapshot = await testClient.snapshot()
      await testClient.mine({ blocks: 1 })
      await testClient.revert({ id: snapshot })
      await testClient.mine({ blocks: 1 })
      const next = await after.getBlock()
      expect(next.number).toBe(loaded.number + 1n)
      expect(Number(next.timestamp)).toBeGreaterThanOrEqual(secondStarted)
      expect(Number(next.timestamp)).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000))
    } finally {
      await Promise.all([first.stop(), second.stop()])
    }
  })

  it('never mines a block before the deployment’s last one, where the wall clock reads earlier', async () => {
    // A deployment whose clock ran two minutes ahead of this machine's: Date.now() read ahead while
    // it started, as after the wall clock is stepped back.
    const fundUsdc = 4_322_000_000n
    vi.useFakeTimers({ toFake: ['Date'] })
    vi.setSystemTime(Date.now() + 120_000)
    const first = await startDevnet({ chain: 'base-sepolia', fundUsdc }).finally(() =>
      vi.useRealTimers(),
    )
    const deployedAt = await createPublicClient({ transport: http(first.rpcUrl) }).getBlock()
    expect(Number(deployedAt.timestamp)).toBeGreaterThan(Date.now() / 1000 + 100)
    const second = await startDevnet({ chain: 'base-sepolia', fundUsdc })
    try {
      const t = devnetClients(second)
      const loaded = await t.publicClient.getBlock()
      expect(loaded.number).toBe(deployedAt.number + 1n)
      expect(loaded.timestamp).toBeGreaterThan(deployedAt.timestamp)
      // The venues accrue from their last update: a deposit goes through (it panicked with 0x11).
      await t.vault.ensureInitializedAndWait()
      await t.vault.depositAndWait({ amount: 10_000_000n })
      const next = await t.publicClient.getBlock()
      expect(next.timestamp).toBeGreaterThanOrEqual(loaded.timestamp)
    } finally {
      await Promise.all([first.stop(), second.stop()])
    }
  })

  it('deploys afresh once the deployment is a minute old, and that one serves the next minute', async () => {
    const fundUsdc = 4_323_000_000n
    // The minute on performance.now(), which the deployment's age is read from.
    vi.useFakeTimers({ toFake: ['performance'] })
    const devnets: Devnet[] = []
    /** The head of a new devnet: a loaded one has an empty block on the deployment's last. */
    const startHead = async () => {
      const devnet = await startDevnet({ chain: 'base', fundUsdc })
      devnets.push(devnet)
      return createPublicClient({ transport: http(devnet.rpcUrl) }).getBlock()
    }
    try {
      const deployed = await startHead()
      expect(deployed.transactions).toHaveLength(1)
      vi.advanceTimersByTime(59_000)
      const loaded = await startHead()
      expect([loaded.number, loaded.transactions]).toEqual([deployed.number + 1n, []])
      vi.advanceTimersByTime(1_000)
      const redeployed = await startHead()
      expect([redeployed.number, redeployed.transactions.length]).toEqual([deployed.number, 1])
      vi.advanceTimersByTime(59_000)
      const loadedAgain = await startHead()
      expect([loadedAgain.number, loadedAgain.transactions]).toEqual([deployed.number + 1n, []])
    } finally {
      vi.useRealTimers()
      await Promise.all(devnets.map((devnet) => devnet.stop()))
    }
  })
})

describe('the anvil launcher', () => {
  it('stop() leaves no process behind and is idempotent', async () => {
    const anvil = await startAnvil({ chainId: 84532 })
    expect(isAlive(anvil.pid)).toBe(true)
    await anvil.stop()
    await anvil.stop()
    expect(isAlive(anvil.pid)).toBe(false)
    await expect(fetch(anvil.rpcUrl, { method: 'POST' })).rejects.toThrow()
  })

  it('keeps its past states in a folder of its own and removes it on stop, and a dead process’s at the next start', async () => {
    // This process's folders only: another test worker starts its own anvils in the same tmpdir meanwhile.
    const homes = () =>
      new Set(
        readdirSync(tmpdir()).filter((name) => name.startsWith(`x402-vault-anvil-${process.pid}-`)),
      )
    // Left by a process that has died (no pid is this large): the next start removes it.
    const stale = mkdtempSync(join(tmpdir(), 'x402-vault-anvil-999999999-'))
    writeFileSync(join(stale, 'state'), 'x')
    const before = homes()
    const anvil = await startAnvil({ chainId: 84532 })
    const [home, ...more] = [...homes()].filter((name) => !before.has(name))
    expect(more).toEqual([])
    expect(home).toMatch(new RegExp(`^x402-vault-anvil-${process.pid}-`))
    expect(existsSync(stale)).toBe(false)
    // Past the states anvil holds in memory, it writes them under its HOME.
    await fetch(anvil.rpcUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'anvil_mine', params: ['0x200'] }),
    })
    const states = join(tmpdir(), home as string, '.foundry/anvil/tmp')
    expect(readdirSync(states).length).toBeGreaterThan(0)
    await anvil.stop()
    expect(existsSync(join(tmpdir(), home as string))).toBe(false)
  })

  it('explains how to install anvil when there is none', () => {
    let error: unknown
    try {
      resolveAnvilBinary({ searchPackages: false, path: '/nonexistent' })
    } catch (e) {
      error = e
    }
    expect(error).toBeInstanceOf(DevnetError)
    expect((error as DevnetError).code).toBe('ANVIL_NOT_FOUND')
    expect((error as DevnetError).message).toContain('npm install --save-dev @foundry-rs/anvil')
    // What works in a fresh folder, where `npx x402-vault@beta devnet` installs no anvil.
    expect((error as DevnetError).message).toContain(
      'npx -y -p x402-vault@beta -p @foundry-rs/anvil x402-vault devnet',
    )
  })

  it('rejects an unknown chain or a bad port before starting anything', async () => {
    for (const options of [{ chain: 'mainnet' }, { port: -1 }, { port: 70_000 }, { port: 1.5 }]) {
      const error = await startDevnet(options as never).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(DevnetError)
      expect((error as DevnetError).code).toBe('INVALID_OPTIONS')
    }
  })

  it('finds anvil on PATH when the npm package is not used', () => {
    const fromPackage = resolveAnvilBinary()
    const dir = fromPackage.slice(0, fromPackage.lastIndexOf('/'))
    expect(resolveAnvilBinary({ searchPackages: false, path: `/nonexistent:${dir}` })).toBe(
      fromPackage,
    )
  })
})
