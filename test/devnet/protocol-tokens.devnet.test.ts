import {
  type Address,
  encodeFunctionData,
  type Hex,
  hashDomain,
  keccak256,
  parseEventLogs,
  parseSignature,
  toHex,
} from 'viem'
import { describe, expect, it } from 'vitest'
import {
  Multicall3Artifact,
  ShareTokenArtifact,
  TestUSDCArtifact,
  VaultRouterArtifact,
} from '../../src/devnet/artifacts/index.js'
import { multicall3Address } from '../../src/sdk/chains.js'
import {
  expectCustomError,
  expectRevertReason,
  type ProtocolHarness,
  usdc,
  useProtocolHarness,
} from '../support/protocolHarness.js'

const token = TestUSDCArtifact.abi
const router = VaultRouterArtifact.abi

describe('vault protocol: share token, test USDC and Multicall3', () => {
  const harness = useProtocolHarness()

  const usdcDomain = () => harness.usdcDomain()

  type Wallet = ProtocolHarness['merchant']

  const signPermit = (
    owner: Wallet,
    spender: Address,
    value: bigint,
    nonce: bigint,
    deadline: bigint,
  ) => harness.signUsdcPermit(owner, { spender, value, nonce, deadline })

  const authorizationTypes = (
    primaryType: 'TransferWithAuthorization' | 'ReceiveWithAuthorization',
  ) => ({
    [primaryType]: [
      { name: 'from', type: 'address' },
      { name: 'to', type: 'address' },
      { name: 'value', type: 'uint256' },
      { name: 'validAfter', type: 'uint256' },
      { name: 'validBefore', type: 'uint256' },
      { name: 'nonce', type: 'bytes32' },
    ],
  })

  /** An EIP-3009 authorization from `from`, valid from now on for an hour, with a fresh random nonce. */
  const signAuthorization = async (
    from: Wallet,
    to: Address,
    value: bigint,
    primaryType:
      | 'TransferWithAuthorization'
      | 'ReceiveWithAuthorization' = 'TransferWithAuthorization',
    window?: { validAfter: bigint; validBefore: bigint },
  ) => {
    const now = await harness.latestTimestamp()
    const message = {
      from: from.account.address,
      to,
      value,
      validAfter: window?.validAfter ?? 0n,
      validBefore: window?.validBefore ?? now + 3600n,
      nonce: keccak256(toHex(`${primaryType}:${Math.random()}:${Date.now()}`)),
    }
    const signature = await from.signTypedData({
      domain: usdcDomain(),
      types: authorizationTypes(primaryType),
      primaryType,
      message,
    })
    return { message, signature, ...splitSignature(signature) }
  }

  const splitSignature = (signature: Hex) => {
    const { r, s, v } = parseSignature(signature)
    return { r, s, v: Number(v) }
  }

  const authorizationState = (authorizer: Address, nonce: Hex) =>
    harness.publicClient.readContract({
      address: harness.addresses.usdc,
      abi: token,
      functionName: 'authorizationState',
      args: [authorizer, nonce],
    })

  it('names dvUSDC "Divigent USDC", keeps it non-transferable (NonTransferable) and router-minted (OnlyVaultRouter)', async () => {
    const { merchant, buyer, addresses, publicClient } = harness
    await harness.registerAndApprove(merchant)
    await harness.deposit(merchant, usdc(100))
    const share = ShareTokenArtifact.abi
    const read = <name extends 'name' | 'symbol' | 'decimals' | 'VAULT_ROUTER'>(
      functionName: name,
    ) => publicClient.readContract({ address: addresses.shareToken, abi: share, functionName })
    expect(
      await Promise.all([read('name'), read('symbol'), read('decimals'), read('VAULT_ROUTER')]),
    ).toEqual(['Divigent USDC', 'dvUSDC', 6, addresses.router])

    await expectCustomError(
      merchant.writeContract({
        address: addresses.shareToken,
        abi: share,
        functionName: 'transfer',
        args: [buyer.account.address, 1n],
      }),
      'NonTransferable',
      [],
    )
    await harness.mined(
      merchant.writeContract({
        address: addresses.shareToken,
        abi: share,
        functionName: 'approve',
        args: [buyer.account.address, usdc(1)],
      }),
    )
    await expectCustomError(
      buyer.writeContract({
        address: addresses.shareToken,
        abi: share,
        functionName: 'transferFrom',
        args: [merchant.account.address, buyer.account.address, 1n],
      }),
      'NonTransferable',
    )
    for (const functionName of ['mint', 'burn'] as const) {
      await expectCustomError(
        buyer.writeContract({
          address: addresses.shareToken,
          abi: share,
          functionName,
          args: [merchant.account.address, 1n],
        }),
        'OnlyVaultRouter',
        [buyer.account.address],
      )
    }
  })

  it('reverts test USDC transfers with the live reason strings, the allowance checked before the balance', async () => {
    const { merchant, buyer, addresses, mined } = harness
    const balance = await harness.usdcBalance(buyer.account.address)
    const transferFrom = (amount: bigint) =>
      merchant.writeContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'transferFrom',
        args: [buyer.account.address, merchant.account.address, amount],
      })
    await expectRevertReason(
      buyer.writeContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'transfer',
        args: [merchant.account.address, balance + 1n],
      }),
      'ERC20: transfer amount exceeds balance',
    )
    // Neither allowance nor balance: the allowance is named.
    await expectRevertReason(transferFrom(balance + 1n), 'ERC20: transfer amount exceeds allowance')
    await mined(
      buyer.writeContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'approve',
        args: [merchant.account.address, balance + 1n],
      }),
    )
    await expectRevertReason(transferFrom(balance + 1n), 'ERC20: transfer amount exceeds balance')
    await mined(transferFrom(balance))
    expect(await harness.usdcBalance(buyer.account.address)).toBe(0n)
  })

  it('describes test USDC like Circle: "USD Coin", version "2", 6 decimals and its EIP-712 domain', async () => {
    const { addresses, publicClient } = harness
    const read = <name extends 'name' | 'symbol' | 'decimals' | 'version' | 'DOMAIN_SEPARATOR'>(
      functionName: name,
    ) => publicClient.readContract({ address: addresses.usdc, abi: token, functionName })
    expect(
      await Promise.all([read('name'), read('symbol'), read('decimals'), read('version')]),
    ).toEqual(['USD Coin', 'USDC', 6, '2'])
    expect(await read('DOMAIN_SEPARATOR')).toBe(
      hashDomain({
        domain: { ...usdcDomain(), chainId: BigInt(harness.devnet.chainId) },
        types: {
          EIP712Domain: [
            { name: 'name', type: 'string' },
            { name: 'version', type: 'string' },
            { name: 'chainId', type: 'uint256' },
            { name: 'verifyingContract', type: 'address' },
          ],
        },
      }),
    )
  })

  it('accepts an EIP-2612 permit once, and rejects an expired one', async () => {
    const { merchant, buyer, addresses, publicClient, mined } = harness
    const deadline = (await harness.latestTimestamp()) + 3600n
    const { r, s, v } = splitSignature(
      await signPermit(merchant, buyer.account.address, usdc(25), 0n, deadline),
    )
    const permit = (permitDeadline = deadline) =>
      buyer.writeContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'permit',
        args: [merchant.account.address, buyer.account.address, usdc(25), permitDeadline, v, r, s],
      })
    await mined(permit())
    expect(
      await publicClient.readContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'allowance',
        args: [merchant.account.address, buyer.account.address],
      }),
    ).toBe(usdc(25))
    expect(
      await publicClient.readContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'nonces',
        args: [merchant.account.address],
      }),
    ).toBe(1n)
    // The nonce moved on, so the same signature no longer matches.
    await expectRevertReason(permit(), 'EIP2612: invalid signature')
    await expectRevertReason(permit(1n), 'FiatTokenV2: permit is expired')
  })

  it('deposits with a permit in one transaction (depositWithPermit)', async () => {
    const { merchant, addresses, publicClient, mined } = harness
    await mined(harness.initializeCall(merchant))
    const depositWithPermit = async (amount: bigint, deadline: bigint, signature: Hex) => {
      const { r, s, v } = splitSignature(signature)
      return merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'depositWithPermit',
        args: [amount, merchant.account.address, deadline, v, r, s, 0n],
      })
    }
    const deadline = (await harness.latestTimestamp()) + 3600n
    const signature = await signPermit(merchant, addresses.router, usdc(40), 0n, deadline)

    const receipt = await mined(depositWithPermit(usdc(40), deadline, signature))
    const [deposited] = parseEventLogs({ abi: router, eventName: 'Deposited', logs: receipt.logs })
    expect(deposited?.args.usdcAmount).toBe(usdc(40))
    expect(await harness.shareBalance(merchant.account.address)).toBe(usdc(40))
    expect(
      await publicClient.readContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'allowance',
        args: [merchant.account.address, addresses.router],
      }),
    ).toBe(0n)

    // Replaying the spent permit: it is swallowed, and then the allowance is missing.
    await expectCustomError(
      depositWithPermit(usdc(40), deadline, signature),
      'InsufficientPermitAllowance',
      [0n, usdc(40)],
    )
    const past = (await harness.latestTimestamp()) - 1n
    await expectCustomError(
      depositWithPermit(
        usdc(40),
        past,
        await signPermit(merchant, addresses.router, usdc(40), 1n, past),
      ),
      'PermitExpired',
      [],
    )
  })

  it('still deposits when the permit was front-run (the failed permit is swallowed)', async () => {
    const { merchant, buyer, addresses, mined } = harness
    await mined(harness.initializeCall(merchant))
    const deadline = (await harness.latestTimestamp()) + 3600n
    const { r, s, v } = splitSignature(
      await signPermit(merchant, addresses.router, usdc(15), 0n, deadline),
    )
    // Someone submits the merchant's permit first.
    await mined(
      buyer.writeContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'permit',
        args: [merchant.account.address, addresses.router, usdc(15), deadline, v, r, s],
      }),
    )
    await mined(
      merchant.writeContract({
        address: addresses.router,
        abi: router,
        functionName: 'depositWithPermit',
        args: [usdc(15), merchant.account.address, deadline, v, r, s, 0n],
      }),
    )
    expect(await harness.shareBalance(merchant.account.address)).toBe(usdc(15))
  })

  it('executes EIP-3009 transferWithAuthorization with v, r, s and marks the nonce used', async () => {
    const { buyer, merchant, facilitator, addresses, mined } = harness
    const auth = await signAuthorization(buyer, merchant.account.address, usdc(3))
    const { from, to, value, validAfter, validBefore, nonce } = auth.message
    const submit = () =>
      facilitator.writeContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'transferWithAuthorization',
        args: [from, to, value, validAfter, validBefore, nonce, auth.v, auth.r, auth.s],
      })
    const merchantBefore = await harness.usdcBalance(merchant.account.address)
    const buyerBefore = await harness.usdcBalance(buyer.account.address)
    expect(await authorizationState(from, nonce)).toBe(false)

    const receipt = await mined(submit())
    expect(await harness.usdcBalance(merchant.account.address)).toBe(merchantBefore + usdc(3))
    expect(await harness.usdcBalance(buyer.account.address)).toBe(buyerBefore - usdc(3))
    expect(await authorizationState(from, nonce)).toBe(true)
    const [used] = parseEventLogs({
      abi: token,
      eventName: 'AuthorizationUsed',
      logs: receipt.logs,
    })
    expect(used?.args).toEqual({ authorizer: from, nonce })
    await expectRevertReason(submit(), 'FiatTokenV2: authorization is used or canceled')
  })

  it('executes transferWithAuthorization with a bytes signature, and checks the validity window', async () => {
    const { buyer, merchant, facilitator, addresses, mined } = harness
    type Signed = Awaited<ReturnType<typeof signAuthorization>>
    const submit = ({ message, signature }: Signed) =>
      facilitator.writeContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'transferWithAuthorization',
        args: [
          message.from,
          message.to,
          message.value,
          message.validAfter,
          message.validBefore,
          message.nonce,
          signature,
        ],
      })
    const auth = await signAuthorization(buyer, merchant.account.address, usdc(2))
    const merchantBefore = await harness.usdcBalance(merchant.account.address)
    await mined(submit(auth))
    expect(await harness.usdcBalance(merchant.account.address)).toBe(merchantBefore + usdc(2))
    expect(await authorizationState(buyer.account.address, auth.message.nonce)).toBe(true)

    const now = await harness.latestTimestamp()
    await expectRevertReason(
      submit(
        await signAuthorization(buyer, merchant.account.address, 1n, 'TransferWithAuthorization', {
          validAfter: now + 600n,
          validBefore: now + 3600n,
        }),
      ),
      'FiatTokenV2: authorization is not yet valid',
    )
    await expectRevertReason(
      submit(
        await signAuthorization(buyer, merchant.account.address, 1n, 'TransferWithAuthorization', {
          validAfter: 0n,
          validBefore: now,
        }),
      ),
      'FiatTokenV2: authorization is expired',
    )
    // Signed by someone else than `from`.
    const forged = await signAuthorization(merchant, merchant.account.address, 1n)
    await expectRevertReason(
      submit({ ...forged, message: { ...forged.message, from: buyer.account.address } }),
      'FiatTokenV2: invalid signature',
    )
  })

  it('lets only the payee submit receiveWithAuthorization, and cancels unused authorizations', async () => {
    const { buyer, merchant, facilitator, addresses, mined } = harness
    const auth = await signAuthorization(
      buyer,
      merchant.account.address,
      usdc(1),
      'ReceiveWithAuthorization',
    )
    const { from, to, value, validAfter, validBefore, nonce } = auth.message
    const receive = (caller: Wallet) =>
      caller.writeContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'receiveWithAuthorization',
        args: [from, to, value, validAfter, validBefore, nonce, auth.signature],
      })
    await expectRevertReason(receive(facilitator), 'FiatTokenV2: caller must be the payee')
    await mined(receive(merchant))
    expect(await authorizationState(from, nonce)).toBe(true)

    const cancelNonce = keccak256(toHex('cancel me'))
    const cancelSignature = await buyer.signTypedData({
      domain: usdcDomain(),
      types: {
        CancelAuthorization: [
          { name: 'authorizer', type: 'address' },
          { name: 'nonce', type: 'bytes32' },
        ],
      },
      primaryType: 'CancelAuthorization',
      message: { authorizer: buyer.account.address, nonce: cancelNonce },
    })
    await mined(
      facilitator.writeContract({
        address: addresses.usdc,
        abi: token,
        functionName: 'cancelAuthorization',
        args: [buyer.account.address, cancelNonce, cancelSignature],
      }),
    )
    expect(await authorizationState(buyer.account.address, cancelNonce)).toBe(true)
  })

  it('serves Multicall3 at the canonical address (aggregate3 with allowFailure)', async () => {
    const { publicClient, addresses, buyer } = harness
    // aggregate3 is payable, so it is simulated rather than read.
    const { result: results } = await publicClient.simulateContract({
      address: multicall3Address,
      abi: Multicall3Artifact.abi,
      functionName: 'aggregate3',
      args: [
        [
          {
            target: addresses.usdc,
            allowFailure: false,
            callData: encodeFunctionData({
              abi: token,
              functionName: 'balanceOf',
              args: [buyer.account.address],
            }),
          },
          {
            target: addresses.router,
            allowFailure: true,
            callData: encodeFunctionData({
              abi: router,
              functionName: 'previewWithdrawNet',
              args: [0n, buyer.account.address],
            }),
          },
        ],
      ],
    })
    expect(results[0]?.success).toBe(true)
    expect(BigInt(results[0]?.returnData ?? '0x')).toBe(usdc(1_000))
    expect(results[1]?.success).toBe(false)

    // viem's chain-aware multicall goes through it too.
    const [timestamp, balance] = await publicClient.multicall({
      allowFailure: false,
      contracts: [
        {
          address: multicall3Address,
          abi: Multicall3Artifact.abi,
          functionName: 'getCurrentBlockTimestamp',
        },
        {
          address: addresses.usdc,
          abi: token,
          functionName: 'balanceOf',
          args: [buyer.account.address],
        },
      ],
    })
    expect(timestamp).toBe(await harness.latestTimestamp())
    expect(balance).toBe(usdc(1_000))
  })
})
