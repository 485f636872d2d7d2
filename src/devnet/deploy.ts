import {
  type Abi,
  type Account,
  type Address,
  BaseError,
  type Chain,
  type Client,
  type EIP1193RequestFn,
  getContractAddress,
  type Hash,
  type Hex,
  type PublicActions,
  type Transport,
  type WalletActions,
} from 'viem'
import type { VaultAddresses } from '../index.js'
import {
  circleUsdcDomain,
  multicall3Address,
  permit2Address,
  withGasMargin,
  x402BatchSettlementAddress,
  x402Erc3009DepositCollectorAddress,
  x402ExactPermit2ProxyAddress,
  x402Permit2DepositCollectorAddress,
  x402UptoPermit2ProxyAddress,
} from '../sdk/shared.js'
import {
  ERC3009DepositCollectorArtifact,
  FeeCollectorArtifact,
  MockAavePoolArtifact,
  MockATokenArtifact,
  MockMorphoVaultArtifact,
  Multicall3Artifact,
  Permit2Artifact,
  Permit2DepositCollectorArtifact,
  ShareTokenArtifact,
  TestUSDCArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
  X402BatchSettlementArtifact,
  X402ExactPermit2ProxyArtifact,
  X402UptoPermit2ProxyArtifact,
} from './artifacts/index.js'
import { DevnetError } from './errors.js'

/** A wallet client extended with `publicActions`, whose account deploys the stack and owns the test knobs. */
export type DeployerClient<
  chain extends Chain | undefined = Chain | undefined,
  account extends Account = Account,
> = Client<
  Transport,
  chain,
  account,
  undefined,
  WalletActions<chain, account> & PublicActions<Transport, chain, account>
>

/** The name of Circle's USDC on Base, which is also its EIP-712 domain name. */
export const circleUsdcName = circleUsdcDomain.name

/** 3.5 % a year, in ray: the Aave stand-in's default supply rate. */
export const defaultAaveLiquidityRateRay = 35n * 10n ** 24n
/** 4.5 % a year, in ray: the Morpho stand-in's default rate (beats Aave by more than the 0.2 % threshold). */
export const defaultMorphoRateRay = 45n * 10n ** 24n
/** USDC the deployer supplies to each venue before the oracle exists, as the live venues hold real liquidity. */
export const defaultVenueSeedUsdc = 1_000_000_000_000n
/** The live runbook records the oracle's first observation 5 minutes after deployment. */
export const oracleSeedDelaySeconds = 300

/** Gas limit for each deployment: given explicitly so a batch needs no estimate against contracts not yet mined. */
const deployGasLimit = 8_000_000n
/** anvil mines on arrival, so receipts are polled often rather than at the chain's block time. */
export const receiptPollingInterval = 50

export type DeployVaultStackArgs<chain extends Chain | undefined, account extends Account> = {
  /** The deployer: it owns every devnet knob. */
  client: DeployerClient<chain, account>
  /** Receives the protocol fee. Default: the deployer. */
  treasury?: Address
  /** May pause deposits and rotate the treasury. Default: the deployer. */
  emergencyMultisig?: Address
  /** The Aave stand-in's supply rate (ray). Default {@link defaultAaveLiquidityRateRay}. */
  aaveLiquidityRateRay?: bigint
  /** The Morpho stand-in's rate (ray). Default {@link defaultMorphoRateRay}. */
  morphoRateRay?: bigint
  /** USDC (base units) supplied to each venue by the deployer. Default {@link defaultVenueSeedUsdc}. */
  venueSeedUsdc?: bigint
  /**
   * The vault's USDC, already on chain (e.g. put at its live address with {@link installAt}). It needs an open
   * `mint(address,uint256)`: the venues mint the USDC that backs their interest. Default: a Circle-style test USDC
   * ("USD Coin", EIP-3009) deployed first.
   */
  usdc?: Address
}

type Venues = Pick<VaultAddresses, 'usdc' | 'aToken' | 'aavePool' | 'morphoVault'>

/**
 * Deploys the devnet's vault stack the way the live one was brought up: the test
 * USDC, the two venues holding real liquidity, the oracle, then the fee collector, dvUSDC and the router; and
 * 5 minutes later the oracle's first observation, so its first routing decision is the live one.
 *
 * The 5 minutes are real chain time (anvil's `evm_increaseTime`): start anvil 5 minutes in the past, as
 * `startDevnet` does, so the chain ends at wall-clock time (x402 authorizations are wall-clock windows).
 *
 * @param args - The deployer client, and optionally the treasury, the emergency multisig, the two rates, the
 *   venues' seed liquidity and a USDC already on chain.
 * @returns The addresses of the deployed contracts.
 * @throws {DevnetError} `DEPLOY_FAILED` when a transaction reverts or lands at an unexpected address (another
 *   transaction from the deployer raced the batch).
 * @example
 * const client = createWalletClient({ account, chain: baseSepolia, transport: http(rpcUrl) }).extend(publicActions)
 * const addresses = await deployVaultStack({ client })
 * addresses.router // '0x…'
 */
export async function deployVaultStack<chain extends Chain | undefined, account extends Account>(
  args: DeployVaultStackArgs<chain, account>,
): Promise<VaultAddresses> {
  // viem's client generics are invariant; past the signature only the common wallet surface is needed.
  const client = args.client as unknown as DeployerClient
  const deployer = client.account.address
  const usdc =
    args.usdc ??
    (
      await deployBatch(client, {
        usdc: { artifact: TestUSDCArtifact, args: () => [circleUsdcName] },
      })
    ).usdc
  const venues = await deployVenues(client, usdc, {
    aaveLiquidityRateRay: args.aaveLiquidityRateRay ?? defaultAaveLiquidityRateRay,
    morphoRateRay: args.morphoRateRay ?? defaultMorphoRateRay,
  })
  await seedVenues(client, venues, args.venueSeedUsdc ?? defaultVenueSeedUsdc)
  const { oracle } = await deployBatch(client, {
    oracle: {
      artifact: VaultOracleArtifact,
      args: () => [venues.aavePool, venues.aToken, venues.usdc, venues.morphoVault],
    },
  })
  const core = await deployBatch(client, {
    feeCollector: {
      artifact: FeeCollectorArtifact,
      args: (at) => [venues.usdc, at.router, args.treasury ?? deployer],
    },
    shareToken: { artifact: ShareTokenArtifact, args: (at) => [at.router] },
    router: {
      artifact: VaultRouterArtifact,
      args: (at) => [
        venues.usdc,
        venues.aToken,
        venues.aavePool,
        venues.morphoVault,
        oracle,
        at.feeCollector,
        at.shareToken,
        args.emergencyMultisig ?? deployer,
      ],
    },
  })
  await seedOracle(client, oracle)
  return { ...venues, oracle, ...core }
}

/** The Aave pool stand-in with its aToken, and the Morpho vault stand-in, over `usdc`. */
async function deployVenues(
  client: DeployerClient,
  usdc: Address,
  rates: { aaveLiquidityRateRay: bigint; morphoRateRay: bigint },
): Promise<Venues> {
  const venues = await deployBatch(client, {
    aToken: { artifact: MockATokenArtifact, args: (at) => [at.aavePool, usdc] },
    aavePool: {
      artifact: MockAavePoolArtifact,
      args: (at) => [usdc, at.aToken, rates.aaveLiquidityRateRay],
    },
    morphoVault: {
      artifact: MockMorphoVaultArtifact,
      args: () => [usdc, rates.morphoRateRay],
    },
  })
  return { usdc, ...venues }
}

/** Gives each venue `amount` of liquidity from the deployer, so utilisation and share prices are live-like. */
async function seedVenues(client: DeployerClient, venues: Venues, amount: bigint): Promise<void> {
  const usdc = { address: venues.usdc, abi: TestUSDCArtifact.abi } as const
  await send(client, 'mint seed USDC', {
    ...usdc,
    functionName: 'mint',
    args: [client.account.address, 2n * amount],
  })
  await send(client, 'approve the Aave pool', {
    ...usdc,
    functionName: 'approve',
    args: [venues.aavePool, amount],
  })
  await send(client, 'seed the Aave pool', {
    address: venues.aavePool,
    abi: MockAavePoolArtifact.abi,
    functionName: 'supply',
    args: [venues.usdc, amount, client.account.address, 0],
  })
  await send(client, 'approve the Morpho vault', {
    ...usdc,
    functionName: 'approve',
    args: [venues.morphoVault, amount],
  })
  await send(client, 'seed the Morpho vault', {
    address: venues.morphoVault,
    abi: MockMorphoVaultArtifact.abi,
    functionName: 'deposit',
    args: [amount, client.account.address],
  })
}

/** Moves the clock 5 minutes and records the oracle's first observation (the live runbook). */
async function seedOracle(client: DeployerClient, oracle: Address): Promise<void> {
  // anvil_* and evm_* methods are not in viem's typed RPC schemas; the untyped request function accepts them.
  const request = client.request as unknown as EIP1193RequestFn
  await attempt('advance the clock for the first oracle observation', () =>
    request({ method: 'evm_increaseTime', params: [oracleSeedDelaySeconds] }),
  )
  await send(client, 'seed the oracle', {
    address: oracle,
    abi: VaultOracleArtifact.abi,
    functionName: 'recordObservation',
  })
}

/**
 * Installs this project's Multicall3 at the canonical address with `anvil_setCode`, so viem's multicall
 * batching works on the devnet.
 *
 * @param client - Any viem client connected to anvil.
 * @returns The Multicall3 address.
 * @throws {DevnetError} `DEPLOY_FAILED` when the code could not be set.
 * @example
 * await installMulticall3(client) // multicall3Address
 */
export async function installMulticall3(client: Client): Promise<Address> {
  const request = client.request as unknown as EIP1193RequestFn
  await attempt('install Multicall3', () =>
    request({
      method: 'anvil_setCode',
      params: [multicall3Address, Multicall3Artifact.deployedBytecode],
    }),
  )
  const code = await request({ method: 'eth_getCode', params: [multicall3Address, 'latest'] })
  if (typeof code !== 'string' || code.toLowerCase() !== Multicall3Artifact.deployedBytecode) {
    throw new DevnetError('Multicall3 was not installed.', {
      code: 'DEPLOY_FAILED',
      details: { address: multicall3Address },
      metaMessages: [`eth_getCode(${multicall3Address}) returned ${String(code).slice(0, 20)}…`],
    })
  }
  return multicall3Address
}

/**
 * Puts a contract at a fixed address, as anvil lets a devnet do for contracts that live at known addresses (Permit2,
 * x402's proxies, the live tokens): deploys it, moves its runtime code and the storage its constructor wrote to `at`
 * (`anvil_setCode`, `anvil_setStorageAt`), and removes the code from where it was deployed.
 *
 * Immutables travel with the code, so one that embeds an address must already hold the right one (a constructor
 * argument such as the canonical Permit2); one derived from `address(this)`, such as a cached EIP-712 domain, must
 * be recomputed when the address differs, as OpenZeppelin's `EIP712` does.
 *
 * @param client - The deployer client, connected to anvil.
 * @param contract - The artifact, its constructor arguments, and the address to install it at.
 * @returns `at`.
 * @throws {DevnetError} `DEPLOY_FAILED` when the deployment reverts or the code could not be moved.
 * @example
 * await installAt(client, { artifact: Permit2Artifact, args: [], at: permit2Address })
 */
export async function installAt<chain extends Chain | undefined, account extends Account>(
  client: DeployerClient<chain, account>,
  contract: {
    artifact: { contractName: string; abi: Abi; bytecode: Hex }
    args: readonly unknown[]
    at: Address
  },
): Promise<Address> {
  const deployer = client as unknown as DeployerClient
  const { contractName } = contract.artifact
  const request = client.request as unknown as EIP1193RequestFn
  const hash = await attempt(`send the ${contractName} deployment`, () =>
    deployer.deployContract({
      abi: contract.artifact.abi,
      bytecode: contract.artifact.bytecode,
      args: contract.args,
      gas: deployGasLimit,
      chain: deployer.chain,
      account: deployer.account,
    }),
  )
  const receipt = await deployer.waitForTransactionReceipt({
    hash,
    pollingInterval: receiptPollingInterval,
  })
  const deployed = receipt.contractAddress
  if (receipt.status !== 'success' || !deployed) {
    throw new DevnetError(`The ${contractName} deployment reverted.`, {
      code: 'DEPLOY_FAILED',
      details: { contractName, transactionHash: hash },
      metaMessages: [`transaction ${hash}`],
    })
  }
  await attempt(`install ${contractName} at ${contract.at}`, async () => {
    // The state diff of the deployment names every slot the constructor wrote, whatever the contract's layout.
    const diff = (await request({
      method: 'debug_traceTransaction',
      params: [hash, { tracer: 'prestateTracer', tracerConfig: { diffMode: true } }],
    })) as { post?: Record<string, { storage?: Record<Hex, Hex> }> }
    const written = Object.entries(diff.post ?? {}).find(
      ([address]) => address.toLowerCase() === deployed.toLowerCase(),
    )?.[1].storage
    const code = (await request({ method: 'eth_getCode', params: [deployed, 'latest'] })) as Hex
    await request({ method: 'anvil_setCode', params: [contract.at, code] })
    for (const [slot, value] of Object.entries(written ?? {})) {
      await request({ method: 'anvil_setStorageAt', params: [contract.at, slot, value] })
    }
    await request({ method: 'anvil_setCode', params: [deployed, '0x'] })
    const installed = await request({ method: 'eth_getCode', params: [contract.at, 'latest'] })
    if (installed !== code)
      throw new Error(`eth_getCode(${contract.at}) differs from the deployed code`)
  })
  return contract.at
}

/**
 * Installs the devnet's Permit2 and x402's two Permit2 proxies (`exact` and `upto`) at their canonical addresses,
 * the ones x402's client signs for and its facilitator calls. The proxies' immutable `PERMIT2` is the canonical
 * Permit2.
 *
 * @param client - The deployer client, connected to anvil.
 * @returns The three addresses.
 * @throws {DevnetError} `DEPLOY_FAILED` when one could not be installed.
 * @example
 * const { permit2 } = await installX402Permit2(client) // permit2Address
 */
export async function installX402Permit2<chain extends Chain | undefined, account extends Account>(
  client: DeployerClient<chain, account>,
): Promise<{ permit2: Address; exactPermit2Proxy: Address; uptoPermit2Proxy: Address }> {
  return {
    permit2: await installAt(client, { artifact: Permit2Artifact, args: [], at: permit2Address }),
    exactPermit2Proxy: await installAt(client, {
      artifact: X402ExactPermit2ProxyArtifact,
      args: [permit2Address],
      at: x402ExactPermit2ProxyAddress,
    }),
    uptoPermit2Proxy: await installAt(client, {
      artifact: X402UptoPermit2ProxyArtifact,
      args: [permit2Address],
      at: x402UptoPermit2ProxyAddress,
    }),
  }
}

/**
 * Installs x402's `batch-settlement` contracts at the addresses `@x402/evm` 2.27 uses: the batch-settlement contract
 * (the channels' escrow) and its two deposit collectors, EIP-3009 and Permit2. The collectors' immutables name the
 * canonical batch-settlement contract (and the Permit2 collector the canonical Permit2, which must be installed too
 * for its deposits to work).
 *
 * @param client - The deployer client, connected to anvil.
 * @returns The three addresses.
 * @throws {DevnetError} `DEPLOY_FAILED` when one could not be installed.
 * @example
 * const { batchSettlement } = await installX402BatchSettlement(client) // x402BatchSettlementAddress
 */
export async function installX402BatchSettlement<
  chain extends Chain | undefined,
  account extends Account,
>(
  client: DeployerClient<chain, account>,
): Promise<{
  batchSettlement: Address
  erc3009DepositCollector: Address
  permit2DepositCollector: Address
}> {
  return {
    batchSettlement: await installAt(client, {
      artifact: X402BatchSettlementArtifact,
      args: [],
      at: x402BatchSettlementAddress,
    }),
    erc3009DepositCollector: await installAt(client, {
      artifact: ERC3009DepositCollectorArtifact,
      args: [x402BatchSettlementAddress],
      at: x402Erc3009DepositCollectorAddress,
    }),
    permit2DepositCollector: await installAt(client, {
      artifact: Permit2DepositCollectorArtifact,
      args: [x402BatchSettlementAddress, permit2Address],
      at: x402Permit2DepositCollectorAddress,
    }),
  }
}

type Deployment<name extends string> = {
  artifact: { contractName: string; abi: Abi; bytecode: Hex }
  /** Constructor arguments; `at` holds every address of the batch, known before anything is sent. */
  args: (at: Record<name, Address>) => readonly unknown[]
}

/**
 * Deploys contracts back to back with explicit nonces. Their addresses follow from the deployer's nonce, so
 * constructors can point at each other before any is mined (the router ⇄ fee collector/share token cycle).
 */
async function deployBatch<name extends string>(
  client: DeployerClient,
  deployments: Record<name, Deployment<name>>,
): Promise<Record<name, Address>> {
  const deployer = client.account.address
  const firstNonce = await client.getTransactionCount({ address: deployer, blockTag: 'pending' })
  const entries = Object.entries(deployments) as [name, Deployment<name>][]
  const at = Object.fromEntries(
    entries.map(([key], offset) => [
      key,
      getContractAddress({ from: deployer, nonce: BigInt(firstNonce + offset) }),
    ]),
  ) as Record<name, Address>

  // Sent in nonce order, one after the other (anvil mines each on arrival); receipts are awaited together.
  const hashes: Hash[] = []
  for (const [offset, [, deployment]] of entries.entries()) {
    const { contractName } = deployment.artifact
    hashes.push(
      await attempt(`send the ${contractName} deployment`, () =>
        client.deployContract({
          abi: deployment.artifact.abi,
          bytecode: deployment.artifact.bytecode,
          args: deployment.args(at),
          nonce: firstNonce + offset,
          gas: deployGasLimit,
          chain: client.chain,
          account: client.account,
        }),
      ),
    )
  }
  const receipts = await Promise.all(
    hashes.map((hash) =>
      client.waitForTransactionReceipt({ hash, pollingInterval: receiptPollingInterval }),
    ),
  )
  for (const [index, receipt] of receipts.entries()) {
    const [key, deployment] = entries[index] as [name, Deployment<name>]
    const { contractName } = deployment.artifact
    if (receipt.status !== 'success') {
      throw new DevnetError(`The ${contractName} deployment reverted.`, {
        code: 'DEPLOY_FAILED',
        details: { contractName, transactionHash: receipt.transactionHash },
        metaMessages: [`transaction ${receipt.transactionHash}`],
      })
    }
    if (receipt.contractAddress?.toLowerCase() !== at[key].toLowerCase()) {
      throw new DevnetError(`${contractName} landed at an unexpected address.`, {
        code: 'DEPLOY_FAILED',
        details: { contractName, expected: at[key], actual: receipt.contractAddress },
        metaMessages: [
          `expected ${at[key]}, got ${receipt.contractAddress}; did another transaction from the deployer run concurrently?`,
        ],
      })
    }
  }
  return at
}

/** Sends one call from the deployer with the SDK's gas margin and requires it to succeed. */
async function send(
  client: DeployerClient,
  what: string,
  call: { address: Address; abi: Abi; functionName: string; args?: readonly unknown[] },
): Promise<void> {
  const hash = await attempt(what, async () => {
    const request = { ...call, account: client.account, chain: client.chain } as never
    const gas = withGasMargin(await client.estimateContractGas(request))
    return client.writeContract({ ...(request as object), gas } as never)
  })
  const receipt = await client.waitForTransactionReceipt({
    hash,
    pollingInterval: receiptPollingInterval,
  })
  if (receipt.status !== 'success') {
    throw new DevnetError(`Could not ${what}: the transaction reverted.`, {
      code: 'DEPLOY_FAILED',
      details: { transactionHash: hash },
      metaMessages: [`transaction ${hash}`],
    })
  }
}

async function attempt<result>(what: string, run: () => Promise<result>): Promise<result> {
  try {
    return await run()
  } catch (cause) {
    // viem's full messages repeat the calldata (whole bytecodes here); its short message is the useful part.
    const reason =
      cause instanceof BaseError
        ? [cause.shortMessage, cause.details].filter(Boolean).join('\n')
        : cause instanceof Error
          ? cause.message
          : String(cause)
    throw new DevnetError(`Could not ${what}.`, {
      code: 'DEPLOY_FAILED',
      details: { reason },
      metaMessages: [reason],
      cause,
    })
  }
}
