import { parseArgs } from 'node:util'
import { type Devnet, startDevnet } from '../devnet/startDevnet.js'
import { writeAddressesFile } from '../devnet/writeAddressesFile.js'
import { type VaultChainName, vaultChains } from '../index.js'
import { chainChoices, defaultChainName, isVaultChainName } from '../sdk/shared.js'
import { chainFlagValue } from './chainHelp.js'
import { UsageError } from './usageError.js'

export const devnetUsage = `Usage: x402-vault devnet [options]

Starts a local chain with the vault protocol and an x402 facilitator, prints the env lines
to point the MCP server and the examples at it, and runs until Ctrl-C.

Options:
  --chain ${chainFlagValue}   chain id to imitate (default ${defaultChainName}, ${vaultChains[defaultChainName].chainId})
  --port <n>                    anvil port on 127.0.0.1 (default: a free port)
  --facilitator-port <n>        facilitator port (default: a free port)
  --bearer-token <token>        make the facilitator require this bearer token
  --no-facilitator              do not serve a facilitator
  --addresses <path>            where to write the addresses JSON (default
                                .devnet/<chain>.addresses.json: one file per chain, so a devnet of
                                each chain can run from one folder)
  -h, --help                    show this help`

/** The env lines that point the MCP server, the examples and a seller at a running devnet. */
export function devnetEnvLines(devnet: Devnet, addressesPath: string): string[] {
  const rpcVar = vaultChains[devnet.chain].rpcUrlVariable
  const lines = [
    `# x402-vault devnet: ${devnet.chain} (chain id ${devnet.chainId}) on ${devnet.rpcUrl}`,
    `${rpcVar}=${devnet.rpcUrl}`,
  ]
  // Always: the examples default to base, the MCP server and the CLI to base-sepolia.
  lines.push(`VAULT_CHAIN=${devnet.chain}`)
  lines.push(`VAULT_ADDRESSES=${addressesPath}`)
  if (devnet.facilitatorUrl) lines.push(`X402_FACILITATOR_URL=${devnet.facilitatorUrl}`)
  lines.push(
    '# DEVNET ONLY: the keys below are public test keys. Never send real funds to them.',
    `MERCHANT_ADDRESS=${devnet.accounts.merchant.address}`,
    `MERCHANT_PRIVATE_KEY=${devnet.accounts.merchant.privateKey}`,
    `BUYER_ADDRESS=${devnet.accounts.buyer.address}`,
    `BUYER_PRIVATE_KEY=${devnet.accounts.buyer.privateKey}`,
  )
  return lines
}

/**
 * Runs `x402-vault devnet`: starts the devnet, writes the addresses JSON, prints the env lines and
 * waits for SIGINT/SIGTERM to shut down cleanly.
 */
export async function runDevnetCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      chain: { type: 'string', default: defaultChainName },
      port: { type: 'string' },
      'facilitator-port': { type: 'string' },
      'bearer-token': { type: 'string' },
      'no-facilitator': { type: 'boolean', default: false },
      addresses: { type: 'string' },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  })
  if (values.help) {
    process.stdout.write(`${devnetUsage}\n`)
    return 0
  }
  if (!isVaultChainName(values.chain)) {
    throw new UsageError(
      `--chain must be ${chainChoices((chain) => chain.name)}, not "${values.chain}".`,
    )
  }
  const chain: VaultChainName = values.chain
  const port = optionalPort(values.port, '--port')
  const facilitatorPort = optionalPort(values['facilitator-port'], '--facilitator-port')

  const devnet = await startDevnet({
    chain,
    ...(port === undefined ? {} : { port }),
    facilitator: values['no-facilitator']
      ? false
      : {
          ...(values['bearer-token'] ? { bearerToken: values['bearer-token'] } : {}),
          ...(facilitatorPort === undefined ? {} : { port: facilitatorPort }),
        },
  })

  const addressesPath = await writeAddressesFile(
    devnet,
    values.addresses ?? defaultAddressesPath(chain),
  )

  process.stdout.write(`${devnetEnvLines(devnet, addressesPath).join('\n')}\n`)
  process.stderr.write('devnet running; press Ctrl-C to stop.\n')

  await new Promise<void>((done) => {
    const shutdown = () => {
      process.off('SIGINT', shutdown)
      process.off('SIGTERM', shutdown)
      done()
    }
    process.on('SIGINT', shutdown)
    process.on('SIGTERM', shutdown)
  })
  process.stderr.write('stopping devnet…\n')
  await devnet.stop()
  return 0
}

/** Where `x402-vault devnet` writes a chain's addresses by default: one file per chain. */
export function defaultAddressesPath(chain: VaultChainName): string {
  return `.devnet/${chain}.addresses.json`
}

function optionalPort(text: string | undefined, flag: string): number | undefined {
  if (text === undefined) return undefined
  if (!/^\d{1,5}$/.test(text) || Number(text) > 65_535) {
    throw new UsageError(`${flag} must be a port number (0-65535), not "${text}".`)
  }
  return Number(text)
}
