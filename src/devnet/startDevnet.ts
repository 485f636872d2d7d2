import {
  type Address,
  type Chain,
  type Client,
  createTestClient,
  createWalletClient,
  type EIP1193RequestFn,
  type Hex,
  http,
  type PublicClient,
  parseAbi,
  publicActions,
} from 'viem'
import { type PrivateKeyAccount, privateKeyToAccount } from 'viem/accounts'
import { type VaultAddresses, type VaultChainName, vaultChains } from '../index.js'
import {
  chainChoices,
  defaultChainName,
  importPeer,
  isVaultChainName,
  nodeHttpFetch,
} from '../sdk/shared.js'
import { advanceYield } from './advanceYield.js'
import { startAnvil } from './anvil.js'
import {
  type DeployerClient,
  deployVaultStack,
  installMulticall3,
  installX402BatchSettlement,
  installX402Permit2,
  oracleSeedDelaySeconds,
} from './deploy.js'
import { DevnetError } from './errors.js'
import { type DevnetTokens, installVaultUsdc, installX402DefaultUsdc } from './tokens.js'

/** A devnet account. Its key is public knowledge (anvil's test mnemonic): never use it on a real network. */
export type DevnetAccount = { address: Address; privateKey: Hex }

export type StartDevnetOptions = {
  /** Which public chain the devnet imitates (its chain id). Default `base-sepolia` (84532). */
  chain?: VaultChainName
  /** Anvil's port on 127.0.0.1; by default a free one. */
  port?: number
  /**
   * Also serve a local x402 facilitator; `{ bearerToken }` makes it require that token. It needs the
   * packages `@x402/core`, `@x402/evm` and `zod`: without one, `startDevnet` rejects with
   * `PEER_DEPENDENCY_MISSING` naming it.
   */
  facilitator?: boolean | { bearerToken?: string; port?: number }
  /** Test USDC (base units) of each token minted to the merchant and to the buyer. Default 1,000 USDC each. */
  fundUsdc?: bigint
}

export type Devnet = {
  rpcUrl: string
  chain: VaultChainName
  chainId: number
  /** The viem chain of the imitated network with its RPC URL pointed at the devnet. */
  viemChain: Chain
  addresses: VaultAddresses
  /**
   * The tokens at their live addresses: the vault's USDC (Circle's on `base`, Aave's test USDC on `base-sepolia`,
   * paid through Permit2) and on `base-sepolia` Circle's test USDC. Permit2 and x402's Permit2 proxies answer at
   * their canonical addresses on both chains.
   */
  tokens: DevnetTokens
  accounts: {
    /** Deploys the stack; owner of the test knobs and the router's emergency multisig. */
    deployer: DevnetAccount
    merchant: DevnetAccount
    buyer: DevnetAccount
    /** Submits x402 settlements and pays their gas. */
    facilitator: DevnetAccount
  }
  /** The local x402 facilitator's URL, when one was asked for. */
  facilitatorUrl?: string
  /**
   * Moves the chain's clock forward and mines a block, so interest accrues. x402 buyers sign their
   * authorisations' deadlines with the wall clock: once the chain is ahead of it, their payments fail
   * (the authorisation looks expired). Use `advanceYield` to show yield on a devnet that takes payments.
   */
  advanceTime: (seconds: number | bigint) => Promise<void>
  /**
   * Gives the venues (Aave, Morpho) `seconds` more of interest at their current rates without moving
   * the clock, and mines a block: the vault's positions grow as after that wait, and x402 payments
   * keep working. Right after it, the oracle reads Morpho's share-price jump as a high rate for its
   * 4-hour window.
   */
  advanceYield: (seconds: number | bigint) => Promise<void>
  /** Stops the facilitator and anvil; leaves no process behind. */
  stop: () => Promise<void>
}

/**
 * The keys of anvil's first four accounts, which it funds with ETH for gas: the well-known test
 * mnemonic's (`test test … junk`, at m/44'/60'/0'/0/0 to 3, public knowledge). Written out because
 * deriving them (PBKDF2 and BIP-32) cost every devnet start a quarter of a second of CPU; a test
 * derives them again and compares.
 */
export const anvilAccountKeys = {
  deployer: '0xac0974bec39a17e36ba4a6b4d238ff944bacb478cbed5efcae784d7bf4f2ff80',
  merchant: '0x59c6995e998f97a5a0044966f0945389dc9e86dae88c7a8412f4603b6b78690d',
  buyer: '0x5de4111afa1a4b94908f83103eb1f1706367c2e68ca870fc3fb9a804cdab365a',
  facilitator: '0x7c852118294e51e653712a81e05800f419141751be58f605c371e15141b007a6',
} as const satisfies Record<string, Hex>
const accountRoles = ['deployer', 'merchant', 'buyer', 'facilitator'] as const

const usdcMintAbi = parseAbi(['function mint(address to, uint256 amount)'])

/**
 * Starts a local chain with the whole vault protocol deployed (and optionally an x402 facilitator).
 *
 * Anvil runs with the chain id of `base-sepolia` or `base`, so the SDK treats it like the public
 * network with an address override. The genesis block sits above viem's Multicall3 `blockCreated`
 * for that chain, so block-pinned multicalls work. The tokens sit at their live addresses and behave
 * as the live ones do (on `base-sepolia` the vault's USDC has no EIP-3009, so x402 buyers pay it
 * through Permit2), and Permit2 and x402's Permit2 proxies answer at their canonical ones. The stack
 * is deployed as the live one was: venues with liquidity, then the oracle's first observation 5
 * minutes later; the chain then runs on wall-clock time.
 *
 * A later devnet of the same chain and funding in the same process, within a minute, starts from the
 * first one's state as deployed (anvil's `anvil_dumpState`, loaded into a new anvil): the same
 * contracts, balances, blocks, logs and past states, in about a quarter of the time. One empty block,
 * mined as it loads, puts the chain on wall-clock time. The first devnet's later transactions are not
 * in it.
 *
 * @param options - chain, port, facilitator, funding.
 * @returns The devnet: RPC URL, addresses, accounts, `advanceTime`, `stop`.
 * @example
 * const devnet = await startDevnet({ chain: 'base-sepolia', facilitator: true })
 * console.log(devnet.rpcUrl, devnet.addresses.router)
 * await devnet.stop()
 */
export async function startDevnet(options: StartDevnetOptions = {}): Promise<Devnet> {
  const chainName = options.chain ?? defaultChainName
  const entry = isVaultChainName(chainName) ? vaultChains[chainName] : undefined
  if (!entry) {
    throw new DevnetError(`Unknown chain ${JSON.stringify(String(chainName))}.`, {
      code: 'INVALID_OPTIONS',
      details: { chain: chainName },
      metaMessages: [
        `Use ${chainChoices((chain) => `'${chain.name}' (chain id ${chain.chainId})`)}.`,
      ],
    })
  }
  if (
    options.port !== undefined &&
    (!Number.isInteger(options.port) || options.port < 0 || options.port > 65_535)
  ) {
    throw new DevnetError(`Invalid port ${String(options.port)}.`, {
      code: 'INVALID_OPTIONS',
      details: { port: options.port },
      metaMessages: ['Give an integer from 0 to 65535, or leave it out for a free port.'],
    })
  }
  // The facilitator needs @x402/core, @x402/evm and zod (optional peer dependencies): loaded before
  // anvil starts, so that a missing one stops nothing half-started and is named in the error.
  const facilitatorModule = options.facilitator
    ? await importPeer(() => import('./facilitator.js'), {
        feature: 'The devnet’s x402 facilitator (x402-vault/devnet)',
        packages: ['@x402/core', '@x402/evm', 'zod'],
      })
    : undefined
  // A devnet of this chain and funding deployed in this process within the minute left its state: load
  // it rather than deploy again (a quarter of the CPU, and of the time, of a deployment).
  const fund = options.fundUsdc ?? 1_000_000_000n
  const deploymentKey = `${chainName}:${fund}`
  const deployed = recentDeployment(deploymentKey)
  const multicallBlock = entry.viemChain.contracts?.multicall3?.blockCreated ?? 0
  const anvil = await startAnvil({
    chainId: entry.chainId,
    blockNumber: BigInt(multicallBlock) + 1_000n,
    // Deploying moves the clock forward by the oracle's seed delay; starting that far in the past leaves the
    // chain on wall-clock time, which x402 authorizations (valid-after/valid-before windows) are signed in.
    // A loaded state keeps its blocks, and the chain goes on from them on wall-clock time.
    ...(deployed
      ? {}
      : { genesisTimestamp: BigInt(Math.floor(Date.now() / 1000) - oracleSeedDelaySeconds) }),
    ...(options.port === undefined ? {} : { port: options.port }),
  })

  const stops: (() => Promise<void>)[] = [anvil.stop]
  const stop = async () => {
    for (const fn of stops.reverse()) await fn()
    stops.length = 0
  }

  try {
    const viemChain: Chain = {
      ...entry.viemChain,
      rpcUrls: { default: { http: [anvil.rpcUrl] } },
    }
    // The deployer and the facilitator sign with these.
    const signers = Object.fromEntries(
      accountRoles.map((role) => [role, privateKeyToAccount(anvilAccountKeys[role])]),
    ) as Record<(typeof accountRoles)[number], PrivateKeyAccount>
    const accounts = Object.fromEntries(
      accountRoles.map((role) => [
        role,
        { address: signers[role].address, privateKey: anvilAccountKeys[role] as Hex },
      ]),
    ) as Devnet['accounts']

    const client = createWalletClient({
      account: signers.deployer,
      chain: viemChain,
      transport: http(anvil.rpcUrl, { fetchFn: nodeHttpFetch }),
    }).extend(publicActions)

    const testClient = createTestClient({
      mode: 'anvil',
      chain: viemChain,
      transport: http(anvil.rpcUrl, { fetchFn: nodeHttpFetch }),
    })

    let addresses: VaultAddresses
    let tokens: DevnetTokens
    if (deployed) {
      await testClient.loadState({ state: deployed.state })
      // A block now, as a deployment's last one is: anvil's evm_revert sets the clock back to the
      // snapshot's block, and a snapshot of the loaded chain's last block would set it minutes back.
      // Never before the deployment's last block: the new anvil's clock does not know of it, and
      // where the wall clock reads earlier (seen in a full test run: a loaded chain's first block 5 s
      // before the deployment's last), the venues' interest (now minus their last update) underflows.
      const head = await client.getBlock({ blockTag: 'latest' })
      const now = BigInt(Math.floor(Date.now() / 1000))
      await testClient.setNextBlockTimestamp({
        timestamp: now > head.timestamp ? now : head.timestamp + 1n,
      })
      await testClient.mine({ blocks: 1 })
      ;({ addresses, tokens } = deployed)
    } else {
      ;({ addresses, tokens } = await deployAndFund(client, chainName, accounts, fund))
      deployedStates().set(deploymentKey, {
        state: await dumpDeployedState(client),
        at: performance.now(),
        addresses,
        tokens,
      })
    }

    let facilitatorUrl: string | undefined
    if (options.facilitator && facilitatorModule) {
      const settings = options.facilitator === true ? {} : options.facilitator
      const facilitator = await facilitatorModule.startFacilitatorServer({
        rpcUrl: anvil.rpcUrl,
        chain: viemChain,
        account: signers.facilitator,
        bearerToken: settings.bearerToken,
        ...(settings.port === undefined ? {} : { port: settings.port }),
      })
      stops.push(facilitator.stop)
      facilitatorUrl = facilitator.url
    }

    return {
      rpcUrl: anvil.rpcUrl,
      chain: chainName,
      chainId: entry.chainId,
      viemChain,
      addresses,
      tokens,
      accounts,
      ...(facilitatorUrl ? { facilitatorUrl } : {}),
      async advanceTime(seconds) {
        await testClient.increaseTime({ seconds: Number(seconds) })
        await testClient.mine({ blocks: 1 })
      },
      advanceYield: (seconds) =>
        advanceYield(client as unknown as PublicClient, testClient, addresses, seconds),
      stop,
    }
  } catch (cause) {
    await stop()
    if (cause instanceof DevnetError) throw cause
    throw new DevnetError('The devnet could not be set up.', {
      code: 'DEPLOY_FAILED',
      metaMessages: [cause instanceof Error ? cause.message.split('\n')[0] : undefined],
      cause,
    })
  }
}

/** A deployed and funded devnet's chain (`anvil_dumpState`), and where its contracts are. */
type DeployedState = {
  state: Hex
  addresses: VaultAddresses
  tokens: DevnetTokens
  /** When it was deployed (`performance.now()`). */
  at: number
}

/**
 * How long a deployment serves the later devnets: a devnet loaded from it is one deployed that long
 * ago, whose venues' seed has earned that much interest. Much older, it differs from a fresh one by
 * more than a test written for a fresh one allows (seen with deployments several minutes old: the
 * oracle no longer found every venue unsafe after a 1 USDC loss on Morpho, whose 1,000,000 USDC seed
 * earns about 0.085 USDC a minute).
 */
const deploymentServesMs = 60_000

/** The deployment of this chain and funding made in this process less than a minute ago, if any. */
function recentDeployment(key: string): DeployedState | undefined {
  const deployed = deployedStates().get(key)
  return deployed && performance.now() - deployed.at < deploymentServesMs ? deployed : undefined
}

/**
 * The deployed states of this process's devnets, by chain and funding. Kept in the global symbol
 * registry, as the running anvils are: a test runner that loads modules afresh for each file, or a
 * second copy of the package, finds the states the first left.
 */
function deployedStates(): Map<string, DeployedState> {
  const key = Symbol.for('x402-vault.deployedDevnetStates')
  const registry = globalThis as { [key]?: Map<string, DeployedState> }
  registry[key] ??= new Map()
  return registry[key]
}

/**
 * The devnet's whole chain as anvil dumps it: accounts, code and storage, every block, transaction and
 * receipt, and (`true`) the past blocks' states, so that a devnet loaded from it answers logs, receipts
 * and historical reads of the deployment as this one does.
 */
async function dumpDeployedState(client: Client): Promise<Hex> {
  // anvil_dumpState's argument is not in viem's typed test actions; the untyped request accepts it.
  const request = client.request as unknown as EIP1193RequestFn
  return (await request({ method: 'anvil_dumpState', params: [true] })) as Hex
}

/** Deploys the stack and the tokens at their live addresses, and gives the merchant and the buyer `fund` of each token. */
async function deployAndFund(
  client: DeployerClient<Chain, PrivateKeyAccount>,
  chainName: VaultChainName,
  accounts: Devnet['accounts'],
  fund: bigint,
): Promise<{ addresses: VaultAddresses; tokens: DevnetTokens }> {
  await installMulticall3(client)
  const addresses = await deployVaultStack({
    client,
    usdc: await installVaultUsdc(client, chainName),
  })
  const x402DefaultUsdc = await installX402DefaultUsdc(client, chainName)
  const tokens: DevnetTokens = {
    usdc: addresses.usdc,
    ...(x402DefaultUsdc === undefined ? {} : { circleTestUsdc: x402DefaultUsdc }),
  }
  await installX402Permit2(client)
  await installX402BatchSettlement(client)
  for (const token of [tokens.usdc, tokens.circleTestUsdc].filter((token) => token)) {
    for (const wallet of [accounts.merchant.address, accounts.buyer.address]) {
      const hash = await client.writeContract({
        address: token as Address,
        abi: usdcMintAbi,
        functionName: 'mint',
        args: [wallet, fund],
      })
      const receipt = await client.waitForTransactionReceipt({ hash })
      if (receipt.status !== 'success') throw new Error(`funding ${wallet} reverted`)
    }
  }
  return { addresses, tokens }
}
