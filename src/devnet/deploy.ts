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
import { multicall3Address, type VaultAddresses } from '../sdk/chains.js'
import {
  FeeCollectorArtifact,
  MockAavePoolArtifact,
  MockATokenArtifact,
  MockMorphoVaultArtifact,
  Multicall3Artifact,
  ShareTokenArtifact,
  TestUSDCArtifact,
  VaultOracleArtifact,
  VaultRouterArtifact,
} from './artifacts.js'
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

/** 3.5 % a year, in ray: the Aave stand-in's default supply rate. */
export const defaultAaveLiquidityRateRay = 35n * 10n ** 24n
/** 4.5 % a year, in ray: the Morpho stand-in's default rate (beats Aave by more than the 0.2 % threshold). */
export const defaultMorphoRateRay = 45n * 10n ** 24n

/** Gas limit for each deployment: given explicitly so the batch needs no estimate against contracts not yet mined. */
const deployGasLimit = 8_000_000n
/** anvil mines on arrival, so receipts are polled often rather than at the chain's block time. */
const receiptPollingInterval = 50

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
}

/**
 * Deploys the devnet's vault stack (test USDC, Aave and Morpho stand-ins, oracle, fee collector, dvUSDC,
 * router), wires it and records a first oracle observation, so deposits route at once.
 *
 * The eight deployments are sent back to back with explicit nonces (their addresses are known in advance,
 * which also resolves the router ⇄ fee collector/share token cycle), then every receipt is checked.
 *
 * @param args - The deployer client, and optionally the treasury, the emergency multisig and the two rates.
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
  const treasury = args.treasury ?? deployer
  const emergencyMultisig = args.emergencyMultisig ?? deployer

  const firstNonce = await client.getTransactionCount({ address: deployer, blockTag: 'pending' })
  const at = (offset: number) =>
    getContractAddress({ from: deployer, nonce: BigInt(firstNonce + offset) })
  const addresses: VaultAddresses = {
    usdc: at(0),
    aToken: at(1),
    aavePool: at(2),
    morphoVault: at(3),
    oracle: at(4),
    feeCollector: at(5),
    shareToken: at(6),
    router: at(7),
  }

  const deployments: { name: string; address: Address; send: (nonce: number) => Promise<Hash> }[] =
    [
      {
        name: 'TestUSDC',
        address: addresses.usdc,
        send: (nonce) => deploy(client, TestUSDCArtifact, [], nonce),
      },
      {
        name: 'MockAToken',
        address: addresses.aToken,
        send: (nonce) =>
          deploy(client, MockATokenArtifact, [addresses.aavePool, addresses.usdc], nonce),
      },
      {
        name: 'MockAavePool',
        address: addresses.aavePool,
        send: (nonce) =>
          deploy(
            client,
            MockAavePoolArtifact,
            [
              addresses.usdc,
              addresses.aToken,
              args.aaveLiquidityRateRay ?? defaultAaveLiquidityRateRay,
            ],
            nonce,
          ),
      },
      {
        name: 'MockMorphoVault',
        address: addresses.morphoVault,
        send: (nonce) =>
          deploy(
            client,
            MockMorphoVaultArtifact,
            [addresses.usdc, args.morphoRateRay ?? defaultMorphoRateRay],
            nonce,
          ),
      },
      {
        name: 'VaultOracle',
        address: addresses.oracle,
        send: (nonce) =>
          deploy(
            client,
            VaultOracleArtifact,
            [addresses.aavePool, addresses.aToken, addresses.usdc, addresses.morphoVault],
            nonce,
          ),
      },
      {
        name: 'FeeCollector',
        address: addresses.feeCollector,
        send: (nonce) =>
          deploy(client, FeeCollectorArtifact, [addresses.usdc, addresses.router, treasury], nonce),
      },
      {
        name: 'ShareToken',
        address: addresses.shareToken,
        send: (nonce) => deploy(client, ShareTokenArtifact, [addresses.router], nonce),
      },
      {
        name: 'VaultRouter',
        address: addresses.router,
        send: (nonce) =>
          deploy(
            client,
            VaultRouterArtifact,
            [
              addresses.usdc,
              addresses.aToken,
              addresses.aavePool,
              addresses.morphoVault,
              addresses.oracle,
              addresses.feeCollector,
              addresses.shareToken,
              emergencyMultisig,
            ],
            nonce,
          ),
      },
    ]

  // Sent in nonce order, one after the other (anvil mines each on arrival); receipts are awaited together.
  const hashes: Hash[] = []
  for (const [offset, deployment] of deployments.entries()) {
    hashes.push(
      await attempt(`send the ${deployment.name} deployment`, () =>
        deployment.send(firstNonce + offset),
      ),
    )
  }
  const receipts = await Promise.all(
    hashes.map((hash) =>
      client.waitForTransactionReceipt({ hash, pollingInterval: receiptPollingInterval }),
    ),
  )
  for (const [index, receipt] of receipts.entries()) {
    const deployment = deployments[index]
    if (!deployment) continue
    if (receipt.status !== 'success') {
      throw new DevnetError(`The ${deployment.name} deployment reverted.`, {
        code: 'DEPLOY_FAILED',
        details: `transaction ${receipt.transactionHash}`,
      })
    }
    if (receipt.contractAddress?.toLowerCase() !== deployment.address.toLowerCase()) {
      throw new DevnetError(`${deployment.name} landed at an unexpected address.`, {
        code: 'DEPLOY_FAILED',
        details: `expected ${deployment.address}, got ${receipt.contractAddress}; did another transaction from the deployer run concurrently?`,
      })
    }
  }

  // Seed the oracle so it is fresh and has a rate history before the first deposit.
  const seedHash = await attempt('seed the oracle', () =>
    client.writeContract({
      address: addresses.oracle,
      abi: VaultOracleArtifact.abi,
      functionName: 'recordObservation',
      chain: client.chain,
      account: client.account,
    }),
  )
  await expectSuccess(client, seedHash, 'Seeding the oracle')
  return addresses
}

/**
 * Installs this project's Multicall3 at the canonical address with `anvil_setCode`, so viem's multicall
 * batching works on the devnet.
 *
 * @param client - Any viem client connected to anvil.
 * @returns The Multicall3 address.
 * @throws {DevnetError} `DEPLOY_FAILED` when the code could not be set.
 * @example
 * await installMulticall3(client) // '0xcA11bde05977b3631167028862bE2a173976CA11'
 */
export async function installMulticall3(client: Client): Promise<Address> {
  // anvil_* methods are not in viem's typed RPC schemas; the untyped request function accepts them.
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
      details: `eth_getCode(${multicall3Address}) returned ${String(code).slice(0, 20)}…`,
    })
  }
  return multicall3Address
}

async function deploy(
  client: DeployerClient,
  artifact: { abi: Abi; bytecode: Hex },
  constructorArgs: readonly unknown[],
  nonce: number,
): Promise<Hash> {
  // The artifacts' literal ABIs are checked where they are used (tests, SDK); here one generic path deploys them all.
  return client.deployContract({
    abi: artifact.abi,
    bytecode: artifact.bytecode,
    args: constructorArgs,
    nonce,
    gas: deployGasLimit,
    chain: client.chain,
    account: client.account,
  })
}

async function expectSuccess(client: DeployerClient, hash: Hash, what: string) {
  const receipt = await client.waitForTransactionReceipt({
    hash,
    pollingInterval: receiptPollingInterval,
  })
  if (receipt.status !== 'success') {
    throw new DevnetError(`${what} reverted.`, {
      code: 'DEPLOY_FAILED',
      details: `transaction ${hash}`,
    })
  }
}

async function attempt<result>(what: string, run: () => Promise<result>): Promise<result> {
  try {
    return await run()
  } catch (cause) {
    // viem's full messages repeat the calldata (whole bytecodes here); its short message is the useful part.
    const details =
      cause instanceof BaseError
        ? [cause.shortMessage, cause.details].filter(Boolean).join('\n')
        : cause instanceof Error
          ? cause.message
          : String(cause)
    throw new DevnetError(`Could not ${what}.`, { code: 'DEPLOY_FAILED', details, cause })
  }
}
