/**
 * The devnet's Permit2 and x402's two Permit2 proxies, on both chains: they answer at the canonical addresses,
 * settle what x402's client signs, and refuse what the live contracts refuse with the live selectors. Reverts are
 * decoded with the public ABIs (x402's proxy ABIs from `@x402/evm`, Permit2's public interface below), never with
 * the devnet's own artifacts, so a selector that drifted from the live one fails here.
 */
import {
  PERMIT2_ADDRESS,
  permit2WitnessTypes,
  uptoPermit2WitnessTypes,
  x402ExactPermit2ProxyABI,
  x402ExactPermit2ProxyAddress,
  x402UptoPermit2ProxyABI,
  x402UptoPermit2ProxyAddress,
} from '@x402/evm'
import {
  type Abi,
  type Address,
  domainSeparator,
  erc20Abi,
  type Hex,
  keccak256,
  maxUint256,
  type PrivateKeyAccount,
  parseAbi,
  parseEventLogs,
  parseSignature,
  serializeCompactSignature,
  signatureToCompactSignature,
  toHex,
  zeroAddress,
} from 'viem'
import { privateKeyToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { permitTypes, usdcAbi } from '../../src/sdk/abis/usdc.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'
import { expectForeignError, expectRevertReason } from '../support/protocolHarness.js'

/** Permit2's public SignatureTransfer interface: the functions, the event and every error it can revert with. */
const permit2Abi = parseAbi([
  'struct TokenPermissions { address token; uint256 amount; }',
  'struct PermitTransferFrom { TokenPermissions permitted; uint256 nonce; uint256 deadline; }',
  'struct PermitBatchTransferFrom { TokenPermissions[] permitted; uint256 nonce; uint256 deadline; }',
  'struct SignatureTransferDetails { address to; uint256 requestedAmount; }',
  'function DOMAIN_SEPARATOR() view returns (bytes32)',
  'function nonceBitmap(address owner, uint256 wordPosition) view returns (uint256)',
  'function invalidateUnorderedNonces(uint256 wordPos, uint256 mask)',
  'function permitTransferFrom(PermitTransferFrom permit, SignatureTransferDetails transferDetails, address owner, bytes signature)',
  'function permitTransferFrom(PermitBatchTransferFrom permit, SignatureTransferDetails[] transferDetails, address owner, bytes signature)',
  'event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask)',
  'error InvalidAmount(uint256 maxAmount)',
  'error LengthMismatch()',
  'error SignatureExpired(uint256 signatureDeadline)',
  'error InvalidNonce()',
  'error InvalidSignatureLength()',
  'error InvalidSignature()',
  'error InvalidSigner()',
  'error InvalidContractSignature()',
])

const permitTransferFromTypes = {
  PermitTransferFrom: [
    { name: 'permitted', type: 'TokenPermissions' },
    { name: 'spender', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
  TokenPermissions: [
    { name: 'token', type: 'address' },
    { name: 'amount', type: 'uint256' },
  ],
} as const

const permitBatchTransferFromTypes = {
  PermitBatchTransferFrom: [
    { name: 'permitted', type: 'TokenPermissions[]' },
    { name: 'spender', type: 'address' },
    { name: 'nonce', type: 'uint256' },
    { name: 'deadline', type: 'uint256' },
  ],
  TokenPermissions: permitTransferFromTypes.TokenPermissions,
} as const

const chains = [
  { chain: 'base-sepolia', token: 'Aave’s test USDC', domain: { name: 'USDC', version: '1' } },
  { chain: 'base', token: 'Circle’s USDC', domain: { name: 'USD Coin', version: '2' } },
] as const

describe.each(chains)('Permit2 and x402’s Permit2 proxies on $chain ($token)', (setting) => {
  let devnet: Devnet
  let clients: DevnetClients
  let facilitator: PrivateKeyAccount
  useDevnet({ chain: setting.chain }, async (started, built) => {
    devnet = started
    clients = built
    facilitator = privateKeyToAccount(started.accounts.facilitator.privateKey)
  })

  const usdc = () => devnet.addresses.usdc
  const payee = () => devnet.accounts.merchant.address
  const now = async () => (await clients.publicClient.getBlock({ blockTag: 'latest' })).timestamp
  const balanceOf = (owner: Address) =>
    clients.publicClient.readContract({
      address: usdc(),
      abi: erc20Abi,
      functionName: 'balanceOf',
      args: [owner],
    })
  const mined = async (hash: Hex | Promise<Hex>) => {
    const receipt = await clients.publicClient.waitForTransactionReceipt({ hash: await hash })
    expect(receipt.status).toBe('success')
    return receipt
  }
  const approvePermit2 = (owner: PrivateKeyAccount) =>
    mined(
      clients.walletFor(owner).writeContract({
        address: usdc(),
        abi: erc20Abi,
        functionName: 'approve',
        args: [PERMIT2_ADDRESS, maxUint256],
      }),
    )
  const permit2Domain = () =>
    ({ name: 'Permit2', chainId: devnet.chainId, verifyingContract: PERMIT2_ADDRESS }) as const

  type ExactPayment = {
    permit: { permitted: { token: Address; amount: bigint }; nonce: bigint; deadline: bigint }
    owner: Address
    witness: { to: Address; validAfter: bigint }
    signature: Hex
  }

  /** The buyer's signature for an `exact` Permit2 payment, as x402's client makes it (its witness types). */
  async function signExact(
    options: {
      signer?: PrivateKeyAccount
      amount?: bigint
      nonce?: bigint
      deadline?: bigint
      validAfter?: bigint
      spender?: Address
    } = {},
  ): Promise<ExactPayment> {
    const signer = options.signer ?? clients.buyer
    const permit = {
      permitted: { token: usdc(), amount: options.amount ?? 10_000n },
      nonce: options.nonce ?? BigInt(keccak256(toHex(Math.random().toString()))),
      deadline: options.deadline ?? (await now()) + 300n,
    }
    const witness = { to: payee(), validAfter: options.validAfter ?? 0n }
    const signature = await signer.signTypedData({
      domain: permit2Domain(),
      types: permit2WitnessTypes,
      primaryType: 'PermitWitnessTransferFrom',
      message: { ...permit, spender: options.spender ?? x402ExactPermit2ProxyAddress, witness },
    })
    return { permit, owner: clients.buyer.address, witness, signature }
  }

  /** `settle` on the exact proxy, simulated from the facilitator (reverts surface with their data). */
  const simulateExact = (payment: ExactPayment) =>
    clients.publicClient.simulateContract({
      account: facilitator,
      address: x402ExactPermit2ProxyAddress,
      abi: x402ExactPermit2ProxyABI,
      functionName: 'settle',
      args: [payment.permit, payment.owner, payment.witness, payment.signature],
    })
  const settleExact = async (payment: ExactPayment) =>
    mined(clients.walletFor(facilitator).writeContract((await simulateExact(payment)).request))

  /** The buyer's signature for an `upto` payment that `settler` may settle. */
  async function signUpto(options: { amount?: bigint; settler?: Address } = {}) {
    const permit = {
      permitted: { token: usdc(), amount: options.amount ?? 10_000n },
      nonce: BigInt(keccak256(toHex(Math.random().toString()))),
      deadline: (await now()) + 300n,
    }
    const witness = {
      to: payee(),
      facilitator: options.settler ?? facilitator.address,
      validAfter: 0n,
    }
    const signature = await clients.buyer.signTypedData({
      domain: permit2Domain(),
      types: uptoPermit2WitnessTypes,
      primaryType: 'PermitWitnessTransferFrom',
      message: { ...permit, spender: x402UptoPermit2ProxyAddress, witness },
    })
    return { permit, witness, signature }
  }
  const simulateUpto = (
    payment: Awaited<ReturnType<typeof signUpto>>,
    amount: bigint,
    caller: PrivateKeyAccount = facilitator,
  ) =>
    clients.publicClient.simulateContract({
      account: caller,
      address: x402UptoPermit2ProxyAddress,
      abi: x402UptoPermit2ProxyABI,
      functionName: 'settle',
      args: [payment.permit, amount, clients.buyer.address, payment.witness, payment.signature],
    })

  /** The buyer's EIP-2612 permit letting Permit2 spend `value` of the vault USDC (x402's gas-sponsoring). */
  async function signPermitForPermit2(value: bigint, deadline: bigint) {
    const nonce = await clients.publicClient.readContract({
      address: usdc(),
      abi: usdcAbi,
      functionName: 'nonces',
      args: [clients.buyer.address],
    })
    const signature = await clients.buyer.signTypedData({
      domain: { ...setting.domain, chainId: devnet.chainId, verifyingContract: usdc() },
      types: permitTypes,
      primaryType: 'Permit',
      message: { owner: clients.buyer.address, spender: PERMIT2_ADDRESS, value, nonce, deadline },
    })
    const { r, s, v } = parseSignature(signature)
    return { value, deadline, r, s, v: Number(v) }
  }

  it('answers at the canonical addresses: Permit2’s domain, both proxies wired to it, x402’s witness types', async () => {
    const read = clients.publicClient.readContract
    for (const address of [
      PERMIT2_ADDRESS,
      x402ExactPermit2ProxyAddress,
      x402UptoPermit2ProxyAddress,
    ]) {
      expect(await clients.publicClient.getCode({ address }), address).toMatch(/^0x[0-9a-f]{100,}/)
    }
    expect(
      await read({ address: PERMIT2_ADDRESS, abi: permit2Abi, functionName: 'DOMAIN_SEPARATOR' }),
    ).toBe(domainSeparator({ domain: permit2Domain() }))
    const proxies = [
      [
        x402ExactPermit2ProxyAddress,
        x402ExactPermit2ProxyABI,
        'Witness(address to,uint256 validAfter)',
      ],
      [
        x402UptoPermit2ProxyAddress,
        x402UptoPermit2ProxyABI,
        'Witness(address to,address facilitator,uint256 validAfter)',
      ],
    ] as const
    for (const [address, abi, witnessType] of proxies) {
      expect(await read({ address, abi, functionName: 'PERMIT2' })).toBe(PERMIT2_ADDRESS)
      expect(await read({ address, abi, functionName: 'WITNESS_TYPEHASH' })).toBe(
        keccak256(toHex(witnessType)),
      )
      expect(await read({ address, abi, functionName: 'WITNESS_TYPE_STRING' })).toBe(
        `Witness witness)TokenPermissions(address token,uint256 amount)${witnessType}`,
      )
    }
  })

  it('settles an exact payment from a buyer who approved Permit2, and spends its nonce bit', async () => {
    await approvePermit2(clients.buyer)
    const nonce = (5n << 8n) | 7n
    const payment = await signExact({ nonce })
    const [buyerBefore, payeeBefore] = await Promise.all([
      balanceOf(clients.buyer.address),
      balanceOf(payee()),
    ])
    const receipt = await settleExact(payment)
    expect(await balanceOf(clients.buyer.address)).toBe(buyerBefore - 10_000n)
    expect(await balanceOf(payee())).toBe(payeeBefore + 10_000n)
    expect(receipt.to).toBe(x402ExactPermit2ProxyAddress.toLowerCase())
    expect(
      parseEventLogs({ abi: x402ExactPermit2ProxyABI, logs: receipt.logs }).map(
        (log) => log.eventName,
      ),
    ).toEqual(['Settled'])
    const bitmap = await clients.publicClient.readContract({
      address: PERMIT2_ADDRESS,
      abi: permit2Abi,
      functionName: 'nonceBitmap',
      args: [clients.buyer.address, 5n],
    })
    expect(bitmap).toBe(1n << 7n)

    // The same payment again: its nonce is spent.
    await expectForeignError(simulateExact(payment), permit2Abi, 'InvalidNonce', [])
  })

  it('accepts a 64-byte compact (EIP-2098) signature as the live Permit2 does', async () => {
    await approvePermit2(clients.buyer)
    const payment = await signExact()
    const compact = serializeCompactSignature(
      signatureToCompactSignature(parseSignature(payment.signature)),
    )
    await settleExact({ ...payment, signature: compact })
  })

  it('refuses what the live contracts refuse, with their selectors', async () => {
    await approvePermit2(clients.buyer)
    const time = await now()
    const permit2Refuses = (
      payment: Promise<ExactPayment> | ExactPayment,
      name: string,
      args: unknown[],
    ) =>
      Promise.resolve(payment).then((signed) =>
        expectForeignError(simulateExact(signed), permit2Abi, name, args),
      )
    const proxyError = (payment: ExactPayment, name: string) =>
      expectForeignError(simulateExact(payment), x402ExactPermit2ProxyABI as Abi, name, [])

    // An expired deadline (the chain's clock, not the wall clock).
    const expired = await signExact({ deadline: time - 1n })
    await permit2Refuses(expired, 'SignatureExpired', [time - 1n])
    // Another signer, a changed payee, a changed amount, another spender: the signature no longer matches.
    await permit2Refuses(signExact({ signer: clients.merchant }), 'InvalidSigner', [])
    const signed = await signExact()
    await permit2Refuses(
      { ...signed, witness: { ...signed.witness, to: devnet.accounts.deployer.address } },
      'InvalidSigner',
      [],
    )
    await permit2Refuses(
      {
        ...signed,
        permit: { ...signed.permit, permitted: { ...signed.permit.permitted, amount: 20_000n } },
      },
      'InvalidSigner',
      [],
    )
    await permit2Refuses(signExact({ spender: x402UptoPermit2ProxyAddress }), 'InvalidSigner', [])
    await permit2Refuses({ ...signed, signature: '0x1234' }, 'InvalidSignatureLength', [])
    await permit2Refuses({ ...signed, signature: `0x${'00'.repeat(65)}` }, 'InvalidSignature', [])

    // The proxy's own checks, before Permit2 is called.
    await proxyError(await signExact({ amount: 0n }), 'InvalidAmount')
    await proxyError({ ...signed, owner: zeroAddress }, 'InvalidOwner')
    await proxyError(
      { ...signed, witness: { ...signed.witness, to: zeroAddress } },
      'InvalidDestination',
    )
    await proxyError(await signExact({ validAfter: time + 3600n }), 'PaymentTooEarly')

    // A buyer who never approved Permit2: the pull fails with the live transfer helper's reason.
    const unapproved = await signExact({ signer: clients.merchant })
    await expectRevertReason(
      simulateExact({ ...unapproved, owner: clients.merchant.address }),
      'TRANSFER_FROM_FAILED',
    )
  })

  it('lets an owner invalidate unordered nonces (UnorderedNonceInvalidation), which then refuse', async () => {
    await approvePermit2(clients.buyer)
    const receipt = await mined(
      clients.walletFor(clients.buyer).writeContract({
        address: PERMIT2_ADDRESS,
        abi: permit2Abi,
        functionName: 'invalidateUnorderedNonces',
        args: [9n, 0b1010n],
      }),
    )
    expect(parseEventLogs({ abi: permit2Abi, logs: receipt.logs })[0]?.args).toEqual({
      owner: clients.buyer.address,
      word: 9n,
      mask: 0b1010n,
    })
    await expectForeignError(
      simulateExact(await signExact({ nonce: (9n << 8n) | 3n })),
      permit2Abi,
      'InvalidNonce',
      [],
    )
    // Its neighbour in the same word is still free.
    await settleExact(await signExact({ nonce: (9n << 8n) | 2n }))
  })

  it('moves tokens for a spender that calls Permit2 itself, and checks amounts and batch lengths', async () => {
    await approvePermit2(clients.buyer)
    const spender = clients.merchant
    const deadline = (await now()) + 300n
    const sign = (nonce: bigint, amount: bigint) =>
      clients.buyer.signTypedData({
        domain: permit2Domain(),
        types: permitTransferFromTypes,
        primaryType: 'PermitTransferFrom',
        message: {
          permitted: { token: usdc(), amount },
          spender: spender.address,
          nonce,
          deadline,
        },
      })
    const permit = (nonce: bigint, amount: bigint) => ({
      permitted: { token: usdc(), amount },
      nonce,
      deadline,
    })
    const transfer = (nonce: bigint, signedAmount: bigint, requested: bigint, signature: Hex) =>
      clients.publicClient.simulateContract({
        account: spender,
        address: PERMIT2_ADDRESS,
        abi: permit2Abi,
        functionName: 'permitTransferFrom',
        args: [
          permit(nonce, signedAmount),
          { to: devnet.accounts.deployer.address, requestedAmount: requested },
          clients.buyer.address,
          signature,
        ],
      })
    // Less than permitted is fine; more is InvalidAmount(permitted).
    const signature = await sign(1n, 5_000n)
    await expectForeignError(transfer(1n, 5_000n, 5_001n, signature), permit2Abi, 'InvalidAmount', [
      5_000n,
    ])
    const before = await balanceOf(devnet.accounts.deployer.address)
    await mined(
      clients
        .walletFor(spender)
        .writeContract((await transfer(1n, 5_000n, 4_000n, signature)).request),
    )
    expect(await balanceOf(devnet.accounts.deployer.address)).toBe(before + 4_000n)
    // Another caller is another spender: the signature names the merchant.
    const other = await sign(2n, 5_000n)
    await expectForeignError(
      clients.publicClient.simulateContract({
        account: facilitator,
        address: PERMIT2_ADDRESS,
        abi: permit2Abi,
        functionName: 'permitTransferFrom',
        args: [
          permit(2n, 5_000n),
          { to: payee(), requestedAmount: 1n },
          clients.buyer.address,
          other,
        ],
      }),
      permit2Abi,
      'InvalidSigner',
      [],
    )

    // A batch of two tokens with one transfer detail.
    const batchPermit = {
      permitted: [
        { token: usdc(), amount: 1n },
        { token: usdc(), amount: 2n },
      ],
      nonce: 3n,
      deadline,
    }
    const batchSignature = await clients.buyer.signTypedData({
      domain: permit2Domain(),
      types: permitBatchTransferFromTypes,
      primaryType: 'PermitBatchTransferFrom',
      message: { ...batchPermit, spender: spender.address },
    })
    const batch = (details: { to: Address; requestedAmount: bigint }[]) =>
      clients.publicClient.simulateContract({
        account: spender,
        address: PERMIT2_ADDRESS,
        abi: permit2Abi,
        functionName: 'permitTransferFrom',
        args: [batchPermit, details, clients.buyer.address, batchSignature],
      })
    await expectForeignError(
      batch([{ to: payee(), requestedAmount: 1n }]),
      permit2Abi,
      'LengthMismatch',
      [],
    )
    await batch([
      { to: payee(), requestedAmount: 1n },
      { to: payee(), requestedAmount: 0n },
    ])
  })

  it('settles through the upto proxy up to the permitted amount, only for the named facilitator', async () => {
    await approvePermit2(clients.buyer)
    const payment = await signUpto({ amount: 10_000n })
    const upto = x402UptoPermit2ProxyABI as Abi
    await expectForeignError(simulateUpto(payment, 10_001n), upto, 'AmountExceedsPermitted', [])
    await expectForeignError(
      simulateUpto(payment, 1n, clients.merchant),
      upto,
      'UnauthorizedFacilitator',
      [],
    )
    // A zero amount is refused by the proxies' shared check (the upto ABI x402 ships does not list it).
    await expectForeignError(
      simulateUpto(payment, 0n),
      x402ExactPermit2ProxyABI as Abi,
      'InvalidAmount',
      [],
    )
    // Another facilitator named in the witness than the one that signed: the signature does not match.
    await expectForeignError(
      clients.publicClient.simulateContract({
        account: clients.merchant,
        address: x402UptoPermit2ProxyAddress,
        abi: x402UptoPermit2ProxyABI,
        functionName: 'settle',
        args: [
          payment.permit,
          1n,
          clients.buyer.address,
          { ...payment.witness, facilitator: clients.merchant.address },
          payment.signature,
        ],
      }),
      permit2Abi,
      'InvalidSigner',
      [],
    )
    const before = await balanceOf(payee())
    const { request } = await simulateUpto(payment, 6_000n)
    const receipt = await mined(clients.walletFor(facilitator).writeContract(request))
    expect(await balanceOf(payee())).toBe(before + 6_000n)
    expect(parseEventLogs({ abi: x402UptoPermit2ProxyABI, logs: receipt.logs })[0]?.eventName).toBe(
      'Settled',
    )
  })

  it('settles with the buyer’s EIP-2612 permit for Permit2 when the buyer never approved it (settleWithPermit)', async () => {
    const payment = await signExact()
    const deadline = payment.permit.deadline
    const settleWithPermit = (permit2612: Awaited<ReturnType<typeof signPermitForPermit2>>) =>
      clients.publicClient.simulateContract({
        account: facilitator,
        address: x402ExactPermit2ProxyAddress,
        abi: x402ExactPermit2ProxyABI,
        functionName: 'settleWithPermit',
        args: [permit2612, payment.permit, payment.owner, payment.witness, payment.signature],
      })
    // The EIP-2612 permit must be for exactly the Permit2 amount.
    await expectForeignError(
      settleWithPermit(await signPermitForPermit2(10_001n, deadline)),
      x402ExactPermit2ProxyABI as Abi,
      'Permit2612AmountMismatch',
      [],
    )
    // A permit that fails (a wrong signature) is swallowed; the pull then fails for want of an allowance.
    const broken = await signPermitForPermit2(10_000n, deadline)
    await expectRevertReason(settleWithPermit({ ...broken, s: broken.r }), 'TRANSFER_FROM_FAILED')

    const before = await balanceOf(payee())
    const receipt = await mined(
      clients.walletFor(facilitator).writeContract((await settleWithPermit(broken)).request),
    )
    expect(await balanceOf(payee())).toBe(before + 10_000n)
    expect(
      parseEventLogs({ abi: x402ExactPermit2ProxyABI, logs: receipt.logs })[0]?.eventName,
    ).toBe('SettledWithPermit')
    // The permit covered this payment only: Permit2's allowance is spent again.
    expect(
      await clients.publicClient.readContract({
        address: usdc(),
        abi: erc20Abi,
        functionName: 'allowance',
        args: [clients.buyer.address, PERMIT2_ADDRESS],
      }),
    ).toBe(0n)
  })
})
