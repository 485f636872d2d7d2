/**
 * The command outputs in docs/operations.md come from a real run: this test makes a merchant's history on
 * a Base devnet (x402 payments, self-payments, transfers, sweeps, a month of yield, withdrawals), runs each
 * documented command with the built bin, and checks each block marked `<!-- real output: name -->`
 * against what the command printed. Hashes, times and figures differ from run to run, so it compares the
 * output's shape: every line and label, with each run of digits as `#` and runs of spaces as one.
 * `UPDATE_DOCS=1` writes the run's output into the guide instead.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { runCli } from '../../harness/runCli.js'
import type { Devnet } from '../../src/devnet/startDevnet.js'
import { parseUsdc } from '../../src/index.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'
import { type MerchantHistory, makeMerchantHistory } from '../support/merchantHistory.js'

const guide = join(import.meta.dirname, '../../docs/operations.md')

let devnet: Devnet
let t: DevnetClients
let history: MerchantHistory
useDevnet({ chain: 'base' }, async (started, clients) => {
  devnet = started
  t = clients
  history = await makeMerchantHistory(devnet, t)
  // A position for status and withdraw to show: 100 USDC a month old.
  await t.vault.depositAndWait({ amount: parseUsdc('100') })
  await devnet.advanceYield(30 * 24 * 3600)
})

let env: Record<string, string>
beforeAll(async () => {
  env = {
    BASE_MAINNET_RPC_URL: devnet.rpcUrl,
    VAULT_CHAIN: 'base',
    VAULT_ADDRESSES: await writeAddressesFile(devnet),
    MERCHANT_PRIVATE_KEY: devnet.accounts.merchant.privateKey,
  }
})

/**
 * An output's shape: hashes as `0x…`, durations (`5s`, `2m`: their unit depends on how long the run
 * took) as `#t`, each other number as `#` (with its decimals: an amount is `25` or `25.000001` by the
 * interest of the seconds before its block), runs of spaces as one.
 */
function shape(text: string): string {
  return text
    .replace(/0x[0-9a-fA-F]{64}/g, '0x…')
    .replace(/\b\d+[smhd]\b/g, '#t')
    .replace(/\d+(\.\d+)?/g, '#')
    .replace(/ +/g, ' ')
    .trimEnd()
}

it('docs/operations.md shows what the commands print, from a real run', async () => {
  const wallet = devnet.accounts.merchant.address
  const commands: Record<string, string[]> = {
    withdraw: ['withdraw', '--amount', '25'],
    ledger: [
      'ledger',
      '--wallet',
      wallet,
      '--from-block',
      history.fromBlock.toString(),
      '--self',
      history.selfPayers[0] as string,
    ],
    status: ['status', '--wallet', wallet],
  }
  const outputs: Record<string, string> = {}
  // In the order a reader meets them: the withdrawal first, then the books that list it.
  for (const [name, args] of Object.entries(commands)) {
    const output = await runCli(args, env)
    expect(output.stderr, name).toBe('')
    expect(output.code, name).toBe(0)
    outputs[name] = `$ x402-vault ${args.join(' ')}\n${output.stdout}`
  }
  let text = await readFile(guide, 'utf8')
  const blocks = [...text.matchAll(/<!-- real output: (\w+) -->\n```sh\n([\s\S]*?)```\n/g)]
  expect(blocks.map((block) => block[1]).sort()).toEqual(Object.keys(commands).sort())
  if (process.env.UPDATE_DOCS) {
    for (const [name, output] of Object.entries(outputs)) {
      text = text.replace(
        new RegExp(`(<!-- real output: ${name} -->\\n\`\`\`sh\\n)[\\s\\S]*?(\`\`\`\\n)`),
        (_, open: string, close: string) => `${open}${output}${close}`,
      )
    }
    await writeFile(guide, text)
    return
  }
  for (const [, name, documented] of blocks) {
    expect(shape(documented as string), `docs/operations.md, ${name}`).toBe(
      shape(outputs[name as string] as string),
    )
  }
})
