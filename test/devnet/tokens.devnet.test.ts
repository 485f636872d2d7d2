/**
 * The devnet's tokens as the live chains have them: where they sit, how they describe themselves, and, for the
 * vault's USDC on Base Sepolia (Aave's test token), a permit in version "1" and no EIP-3009 at all.
 */

import { eip3009ABI } from '@x402/evm'
import {
  type Address,
  BaseError,
  domainSeparator,
  encodeFunctionData,
  erc20Abi,
  type Hex,
  maxUint256,
  type PrivateKeyAccount,
  parseAbi,
  parseSignature,
  zeroAddress,
} from 'viem'
import { describe, expect, it } from 'vitest'
import { AaveTestUSDCArtifact, TestUSDCArtifact } from '../../src/devnet/artifacts/index.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { circleTestUsdcAddress } from '../../src/devnet/tokens.js'
import { parseUsdc, vaultChains } from '../../src/index.js'
import { permitTypes } from '../../src/sdk/abis/usdc.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'
import { expectRevertReason } from '../support/protocolHarness.js'

const aaveToken = AaveTestUSDCArtifact.abi
const circleToken = TestUSDCArtifact.abi
/**
 * What an EIP-3009 token answers and the Aave test token must not: x402's own EIP-3009 ABI (both
 * `transferWithAuthorization` forms, `authorizationState`, `version`), plus Circle's payee-only variant.
 */
const eip3009Abi = [
  ...eip3009ABI,
  ...parseAbi([
    'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, uint8 v, bytes32 r, bytes32 s)',
    'function receiveWithAuthorization(address from, address to, uint256 value, uint256 validAfter, uint256 validBefore, bytes32 nonce, bytes signature)',
  ]),
] as const
const fund = 1_000_000_000n

/** The revert data of a call that must revert, `0x` when it reverted with none. */
async function revertData(call: Promise<unknown>): Promise<Hex> {
  const error = await call.then(
    () => expect.fail('the call succeeded'),
    (cause: unknown) => cause,
  )
  expect(error).toBeInstanceOf(BaseError)
  const withData = (error as BaseError).walk(
    (cause) => typeof (cause as { data?: unknown }).data === 'string',
  ) as { data?: Hex } | null
  return withData?.data ?? '0x'
}

/** Both accounts hold `fund` of every token the devnet funds. */
async function expectFunded(clients: DevnetClients, tokens: Address[]) {
  for (const token of tokens) {
    for (const owner of [clients.merchant.address, clients.buyer.address]) {
      expect(
        await clients.publicClient.readContract({
          address: token,
          abi: erc20Abi,
          functionName: 'balanceOf',
          args: [owner],
        }),
        `${token} of ${owner}`,
      ).toBe(fund)
    }
  }
}

describe("the vault's USDC on base-sepolia: Aave's test token", () => {
  let devnet: Devnet
  let clients: DevnetClients
  useDevnet({ chain: 'base-sepolia' }, async (started, built) => {
    devnet = started
    clients = built
  })

  const usdc = () => devnet.addresses.usdc
  const read = <const name extends 'name' | 'symbol' | 'decimals' | 'EIP712_REVISION'>(
    functionName: name,
  ) => clients.publicClient.readContract({ address: usdc(), abi: aaveToken, functionName })
  const now = async () => (await clients.publicClient.getBlock()).timestamp
  const mined = async (hash: Promise<Hex>) => {
    const receipt = await clients.publicClient.waitForTransactionReceipt({ hash: await hash })
    expect(receipt.status).toBe('success')
    return receipt
  }
  const token = (account: PrivateKeyAccount) => ({
    write: (functionName: 'transfer' | 'transferFrom' | 'approve', args: readonly unknown[]) =>
      clients.walletFor(account).writeContract({
        address: usdc(),
        abi: aaveToken,
        functionName,
        args: args as never,
      }),
  })
  const allowance = (owner: Address, spender: Address) =>
    clients.publicClient.readContract({
      address: usdc(),
      abi: aaveToken,
      functionName: 'allowance',
      args: [owner, spender],
    })

  /** `owner`'s EIP-2612 permit for `spender`, in the domain `version` (the token's is "1"). */
  async function signPermit(
    owner: PrivateKeyAccount,
    spender: Address,
    value: bigint,
    deadline: bigint,
    version = '1',
  ) {
    const nonce = await clients.publicClient.readContract({
      address: usdc(),
      abi: aaveToken,
      functionName: 'nonces',
      args: [owner.address],
    })
    const signature = await owner.signTypedData({
      domain: { name: 'USDC', version, chainId: devnet.chainId, verifyingContract: usdc() },
      types: permitTypes,
      primaryType: 'Permit',
      message: { owner: owner.address, spender, value, nonce, deadline },
    })
    const { r, s, v } = parseSignature(signature)
    return { r, s, v: Number(v) }
  }

  it("sits at the vault's live address; Circle's test USDC at its own; both fund the accounts", async () => {
    expect(usdc()).toBe(vaultChains['base-sepolia'].addresses.usdc)
    expect(devnet.tokens).toEqual({ usdc: usdc(), circleTestUsdc: circleTestUsdcAddress })
    await expectFunded(clients, [usdc(), circleTestUsdcAddress])
    // Circle's test USDC is x402's default asset there: "USDC", version "2", with EIP-3009.
    const circle = (functionName: 'name' | 'version' | 'symbol' | 'decimals') =>
      clients.publicClient.readContract({
        address: circleTestUsdcAddress,
        abi: circleToken,
        functionName,
      })
    expect(
      await Promise.all([circle('name'), circle('version'), circle('symbol'), circle('decimals')]),
    ).toEqual(['USDC', '2', 'USDC', 6])
  })

  it('describes itself like Aave’s test USDC: name() as the domain name, EIP712_REVISION "1", no version()', async () => {
    expect(
      await Promise.all([read('name'), read('symbol'), read('decimals'), read('EIP712_REVISION')]),
    ).toEqual(['USDC', 'USDC', 6, '0x31'])
    expect(
      await clients.publicClient.readContract({
        address: usdc(),
        abi: aaveToken,
        functionName: 'DOMAIN_SEPARATOR',
      }),
    ).toBe(
      domainSeparator({
        domain: { name: 'USDC', version: '1', chainId: devnet.chainId, verifyingContract: usdc() },
      }),
    )
    expect(
      await revertData(
        clients.publicClient.readContract({
          address: usdc(),
          abi: eip3009Abi,
          functionName: 'version',
        }),
      ),
    ).toBe('0x')
  })

  it('has no EIP-3009: every authorization entry point reverts with no data, like a missing function', async () => {
    const { buyer, merchant } = clients
    const nonce = `0x${'11'.repeat(32)}` as const
    const window = [0n, (await now()) + 3600n] as const
    const r = `0x${'22'.repeat(32)}` as const
    const authorization = [buyer.address, merchant.address, 1n, ...window, nonce] as const
    const signatures = [[27, r, r], [`0x${'33'.repeat(65)}`]] as const
    const calls = [
      ...(['transferWithAuthorization', 'receiveWithAuthorization'] as const).flatMap(
        (functionName) =>
          signatures.map((signature) =>
            encodeFunctionData({
              abi: eip3009Abi,
              functionName,
              args: [...authorization, ...signature] as never,
            }),
          ),
      ),
      encodeFunctionData({
        abi: eip3009Abi,
        functionName: 'authorizationState',
        args: [buyer.address, nonce],
      }),
    ]
    // The control: a call that reverts with a reason shows its data, so the empty data below is really empty.
    const overdraft = encodeFunctionData({
      abi: erc20Abi,
      functionName: 'transfer',
      args: [buyer.address, fund + 1n],
    })
    expect(
      await revertData(
        clients.publicClient.call({ account: merchant, to: usdc(), data: overdraft }),
      ),
    ).toMatch(/^0x08c379a0/)
    for (const data of calls) {
      expect(
        await revertData(clients.publicClient.call({ account: merchant, to: usdc(), data })),
        data.slice(0, 10),
      ).toBe('0x')
    }
  })

  it('accepts an EIP-2612 permit in version "1" once; refuses version "2", a used or expired one, and no owner', async () => {
    const { buyer, merchant } = clients
    const deadline = (await now()) + 3600n
    const permit = (
      signed: { r: Hex; s: Hex; v: number },
      options: { owner?: Address; deadline?: bigint } = {},
    ) =>
      clients.walletFor(merchant).writeContract({
        address: usdc(),
        abi: aaveToken,
        functionName: 'permit',
        args: [
          options.owner ?? buyer.address,
          merchant.address,
          25n,
          options.deadline ?? deadline,
          signed.v,
          signed.r,
          signed.s,
        ],
      })
    await expectRevertReason(
      permit(await signPermit(buyer, merchant.address, 25n, deadline, '2')),
      'INVALID_SIGNATURE',
    )
    const signed = await signPermit(buyer, merchant.address, 25n, deadline)
    await expectRevertReason(permit(signed, { owner: zeroAddress }), 'INVALID_OWNER')
    await expectRevertReason(permit(signed, { deadline: (await now()) - 1n }), 'INVALID_EXPIRATION')
    await mined(permit(signed))
    expect(await allowance(buyer.address, merchant.address)).toBe(25n)
    // The nonce moved on: the same signature no longer recovers the owner.
    await expectRevertReason(permit(signed), 'INVALID_SIGNATURE')
  })

  it('reverts with the live reason strings, the balance checked first, and spends even an unlimited allowance', async () => {
    const { buyer, merchant } = clients
    const balance = fund
    await expectRevertReason(
      token(buyer).write('transfer', [merchant.address, balance + 1n]),
      'ERC20: transfer amount exceeds balance',
    )
    // Neither balance nor allowance: the balance is named (Circle's token names the allowance).
    const pull = (amount: bigint) =>
      token(merchant).write('transferFrom', [buyer.address, merchant.address, amount])
    await expectRevertReason(pull(balance + 1n), 'ERC20: transfer amount exceeds balance')
    await expectRevertReason(pull(1n), 'ERC20: transfer amount exceeds allowance')
    await mined(token(buyer).write('approve', [merchant.address, maxUint256]))
    await mined(pull(100n))
    expect(await allowance(buyer.address, merchant.address)).toBe(maxUint256 - 100n)
  })

  it('mints for tests: the faucet is open to anyone', async () => {
    const stranger = clients.buyer
    // Both of Aave's forms: to an account, and to the caller.
    for (const args of [[devnet.accounts.deployer.address, 5n], [7n]] as const) {
      await mined(
        clients
          .walletFor(stranger)
          .writeContract({ address: usdc(), abi: aaveToken, functionName: 'mint', args }),
      )
    }
    expect(
      await clients.publicClient.readContract({
        address: usdc(),
        abi: aaveToken,
        functionName: 'balanceOf',
        args: [stranger.address],
      }),
    ).toBe(fund + 7n)
  })

  it('backs the vault: the SDK deposits with the token\'s version-"1" permit in one transaction', async () => {
    await clients.vault.ensureInitializedAndWait()
    const result = await clients.vault.depositAndWait({ amount: parseUsdc('100') })
    expect(result.method).toBe('depositWithPermit')
    expect(result.approvalTxHash).toBeUndefined()
    expect(result.usdcAmount).toBe(parseUsdc('100'))
  })
})

describe('the devnet on base', () => {
  let devnet: Devnet
  let clients: DevnetClients
  useDevnet({ chain: 'base' }, async (started, built) => {
    devnet = started
    clients = built
  })

  it('puts Circle\'s USDC at its live address: "USD Coin", version "2", EIP-2612 and EIP-3009', async () => {
    const usdc = vaultChains.base.addresses.usdc
    expect(devnet.addresses.usdc).toBe(usdc)
    expect(devnet.tokens).toEqual({ usdc })
    await expectFunded(clients, [usdc])
    const read = (functionName: 'name' | 'version' | 'DOMAIN_SEPARATOR') =>
      clients.publicClient.readContract({ address: usdc, abi: circleToken, functionName })
    expect([await read('name'), await read('version')]).toEqual(['USD Coin', '2'])
    expect(await read('DOMAIN_SEPARATOR')).toBe(
      domainSeparator({
        domain: { name: 'USD Coin', version: '2', chainId: 8453, verifyingContract: usdc },
      }),
    )
    expect(
      await clients.publicClient.readContract({
        address: usdc,
        abi: circleToken,
        functionName: 'authorizationState',
        args: [clients.buyer.address, `0x${'00'.repeat(32)}`],
      }),
    ).toBe(false)
  })
})
