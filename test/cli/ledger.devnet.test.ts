/**
 * `x402-vault ledger`, the built bin, over a merchant history with a known answer made on each chain's
 * devnet: on `base` x402 pays with EIP-3009 (Circle's USDC), on base-sepolia (Aave's test USDC) through
 * x402's Permit2 proxy, with a payment in Circle's test USDC beside it. JSON, CSV and the reconciliation
 * against the history; on base-sepolia also an RPC that refuses wide log ranges, and the HTML report in
 * headless Chromium.
 */
import { mkdir, readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import chromium from '@sparticuz/chromium'
import { parse } from 'csv-parse/sync'
import { type Page, chromium as playwright } from 'playwright-core'
import { erc20Abi, parseEventLogs } from 'viem'
import { beforeAll, describe, expect, it } from 'vitest'
import { writeAddressesFile } from '../../harness/addressesFile.js'
import { type CountingProxy, startCountingProxy } from '../../harness/countingProxy.js'
import { runCli } from '../../harness/runCli.js'
import { tempFolder } from '../../harness/tempFolder.js'
import { csvColumns } from '../../src/cli/ledgerFormat.js'
import type { Devnet, StartDevnetOptions } from '../../src/devnet/startDevnet.js'
import { parseUsdc } from '../../src/index.js'
import { type DevnetClients, useDevnet } from '../support/devnet.js'
import { type MerchantHistory, makeMerchantHistory } from '../support/merchantHistory.js'
import { pdfText } from '../support/pdfText.js'

type JsonAmount = { usdc: string; atomic: string }
type JsonEntry = {
  kind: string
  direction: string
  token: string
  txHash: string
  counterparty: string
  x402Method: string | null
  amount: JsonAmount
  fee: JsonAmount
  shares: string
  yieldRealised: JsonAmount
  balanceAfter: JsonAmount
}

/** A signed decimal USDC string from the CSV, in base units. */
function units(text: string): bigint {
  const [whole = '0', fraction = ''] = text.replace('-', '').split('.')
  const value = BigInt(whole) * 1_000_000n + BigInt(fraction.padEnd(6, '0'))
  return text.startsWith('-') ? -value : value
}

/** Where the page's screenshots and printout go, to look at after a run (a failure names the file). */
const artifacts = join(import.meta.dirname, '../../test-results/ledger')

async function saveScreenshot(page: Page, name: string): Promise<string> {
  await mkdir(artifacts, { recursive: true })
  const path = join(artifacts, name)
  await page.screenshot({ path, fullPage: true })
  return path
}

function launchChromium() {
  return chromium.executablePath().then((executablePath) =>
    playwright.launch({
      executablePath,
      headless: true,
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'],
    }),
  )
}

/**
 * What reaches past the viewport's sides: the page itself when it scrolls sideways, and every element
 * drawn beyond the left or right edge (also inside a box that scrolls, where a reader must swipe to it).
 */
function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth
    const found: string[] = []
    if (document.documentElement.scrollWidth > width)
      found.push(`the page is ${document.documentElement.scrollWidth} px wide`)
    for (const element of Array.from(document.body.querySelectorAll('*'))) {
      const box = element.getBoundingClientRect()
      if (box.width === 0 || box.height === 0) continue
      if (box.left < -0.5 || box.right > width + 0.5) {
        const name = `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}${element.className && typeof element.className === 'string' ? `.${element.className.split(' ')[0]}` : ''}`
        found.push(`${name} ${Math.round(box.left)}–${Math.round(box.right)} px`)
      }
    }
    return found.slice(0, 12)
  })
}

const chains: [string, StartDevnetOptions][] = [
  ['base (EIP-3009)', { chain: 'base' }],
  ['base-sepolia (Permit2)', { chain: 'base-sepolia' }],
]

describe.each(chains)('x402-vault ledger on %s', (_name, options) => {
  let devnet: Devnet
  let t: DevnetClients
  let history: MerchantHistory
  let addressesPath: string
  let ledger: { entries: JsonEntry[] } & Record<string, unknown>
  useDevnet(options, async (started, clients) => {
    devnet = started
    t = clients
    history = await makeMerchantHistory(devnet, t)
  })
  const rpcVariable = () =>
    options.chain === 'base' ? 'BASE_MAINNET_RPC_URL' : 'BASE_SEPOLIA_RPC_URL'
  const run = (args: string[], rpcUrl = devnet.rpcUrl) =>
    runCli(
      [
        'ledger',
        '--chain',
        options.chain as string,
        '--addresses',
        addressesPath,
        '--wallet',
        devnet.accounts.merchant.address,
        '--from-block',
        history.fromBlock.toString(),
        ...history.selfPayers.flatMap((address) => ['--self', address]),
        ...args,
      ],
      { [rpcVariable()]: rpcUrl },
    )
  beforeAll(async () => {
    addressesPath = await writeAddressesFile(devnet)
    const output = await run(['--json'])
    expect(output.stderr).toBe('')
    expect(output.code).toBe(0)
    ledger = JSON.parse(output.stdout)
  })

  it('--json lists every movement of the history, marked as it was paid, and reconciles', () => {
    const usdc = devnet.addresses.usdc
    expect(history.method).toBe(options.chain === 'base' ? 'eip3009' : 'permit2')
    // The scan runs to the latest block: the history's last, or an empty one the devnet mined since.
    expect(BigInt((ledger.closing as { blockNumber: string }).blockNumber)).toBeGreaterThanOrEqual(
      history.toBlock,
    )
    expect(ledger.reconciled).toBe(true)
    const atomic = (value: bigint) => value.toString()
    expect(
      ledger.entries.map((entry) => ({
        kind: entry.kind,
        direction: entry.direction,
        token: entry.token.toLowerCase(),
        txHash: entry.txHash,
        counterparty: entry.counterparty.toLowerCase(),
        x402Method: entry.x402Method,
        amount: entry.amount.atomic,
        shares: entry.shares,
        fee: entry.fee.atomic,
        yieldRealised: entry.yieldRealised.atomic,
      })),
    ).toEqual(
      history.entries.map((entry) => ({
        kind: entry.kind,
        direction: entry.direction,
        token: entry.token.toLowerCase(),
        txHash: entry.txHash,
        counterparty: entry.counterparty.toLowerCase(),
        x402Method: entry.x402Method,
        amount: atomic(entry.amount),
        shares: atomic(entry.shares),
        fee: atomic(entry.fee),
        yieldRealised: atomic(entry.yieldRealised),
      })),
    )
    const sum = (kind: string, direction?: string) =>
      history.entries
        .filter(
          (entry) =>
            entry.kind === kind &&
            entry.token === usdc &&
            (direction === undefined || entry.direction === direction),
        )
        .reduce((total, entry) => total + entry.amount, 0n)
    const fees = history.entries.reduce((total, entry) => total + entry.fee, 0n)
    const totals = ledger.totals as Record<string, JsonAmount>
    expect(totals.receivedX402?.atomic).toBe(atomic(sum('x402')))
    // The merchant's own payments (itself, its operator, the --self wallet) are not revenue.
    expect(totals.receivedSelf?.atomic).toBe(atomic(parseUsdc('0.6')))
    expect(totals.sentSelf?.atomic).toBe(atomic(parseUsdc('0.3')))
    expect(totals.receivedOther?.atomic).toBe(atomic(sum('transfer-in')))
    expect(totals.deposited?.atomic).toBe(atomic(sum('sweep')))
    expect(totals.withdrawn?.atomic).toBe(atomic(sum('withdrawal')))
    expect(totals.sentOther?.atomic).toBe(atomic(sum('transfer-out')))
    expect(totals.feesPaid?.atomic).toBe(atomic(fees))
    // Everything was withdrawn: the yield is what came back beyond what went in, fees included.
    expect(totals.currentValue?.atomic).toBe('0')
    expect(BigInt(totals.yieldEarned?.atomic as string)).toBe(
      sum('withdrawal') + fees - sum('sweep'),
    )
    const tokens = ledger.tokens as { token: string; balanced: boolean }[]
    expect(tokens.map((token) => token.token.toLowerCase())).toEqual(
      [usdc, devnet.tokens.circleTestUsdc]
        .filter((token) => token !== undefined)
        .map((token) => token.toLowerCase()),
    )
    expect(tokens.every((token) => token.balanced)).toBe(true)
  })

  it('--json: each sweep’s and withdrawal’s logIndex points at the USDC Transfer it describes', async () => {
    const moves = ledger.entries.filter((e) => e.kind === 'sweep' || e.kind === 'withdrawal')
    expect(moves.length).toBe(4)
    for (const entry of moves as (JsonEntry & { logIndex: number })[]) {
      const receipt = await t.publicClient.getTransactionReceipt({
        hash: entry.txHash as `0x${string}`,
      })
      const [log] = parseEventLogs({
        abi: erc20Abi,
        eventName: 'Transfer',
        logs: receipt.logs.filter((l) => l.logIndex === entry.logIndex),
      })
      expect(log?.address.toLowerCase(), entry.kind).toBe(devnet.addresses.usdc.toLowerCase())
      expect(log?.args.value, entry.kind).toBe(BigInt(entry.amount.atomic))
      const wallet = devnet.accounts.merchant.address
      expect(entry.kind === 'sweep' ? log?.args.from : log?.args.to).toBe(wallet)
    }
  })

  it('--csv gives the same entries, and its amount column sums to the change in balance', async () => {
    const output = await run(['--csv'])
    expect(output.code).toBe(0)
    const rows = parse(output.stdout, { columns: true }) as Record<string, string>[]
    expect(Object.keys(rows[0] ?? {})).toEqual([...csvColumns])
    expect(rows.map((row) => row.transaction)).toEqual(ledger.entries.map((entry) => entry.txHash))
    for (const [i, row] of rows.entries()) {
      const entry = ledger.entries[i] as JsonEntry
      expect(row.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/)
      const signed = entry.direction === 'out' ? `-${entry.amount.usdc}` : entry.amount.usdc
      expect(row.amount).toBe(signed)
      expect(row.x402_method).toBe(entry.x402Method ?? '')
      expect(row.balance_after).toBe(entry.balanceAfter.usdc)
    }
    const [vaultToken] = ledger.tokens as {
      token: string
      openingBalance: JsonAmount
      closingBalance: JsonAmount
    }[]
    const change = rows
      .filter((row) => row.token_address?.toLowerCase() === vaultToken?.token.toLowerCase())
      .reduce((total, row) => total + units(row.amount as string), 0n)
    expect(change).toBe(
      BigInt(vaultToken?.closingBalance.atomic as string) -
        BigInt(vaultToken?.openingBalance.atomic as string),
    )
  })

  it('self-payments, the operator’s, a second token and a plain transfer: each where it belongs in the text and the CSV', async () => {
    const [text, csv] = await Promise.all([run([]), run(['--csv'])])
    expect(text.stderr).toBe('')
    expect(text.code).toBe(0)
    const totals = ledger.totals as Record<string, JsonAmount>
    const literal = (text: string) => text.replace(/[().]/g, '\\$&')
    const total = (label: string, key: string) =>
      new RegExp(`^ {2}${literal(label)} +${literal((totals[key] as JsonAmount).usdc)}$`, 'm')
    expect(text.stdout).toMatch(total('received through x402', 'receivedX402'))
    expect(text.stdout).toMatch(total('self-payments (not revenue)', 'receivedSelf'))
    expect(text.stdout).toMatch(total('paid to itself', 'sentSelf'))
    const selfLines = text.stdout.split('\n').filter((l) => /^ {2}\S+ +self-payment \(/.test(l))
    expect(selfLines).toHaveLength(4)
    expect(selfLines.filter((l) => l.includes('this wallet'))).toHaveLength(2)
    const tokens = ledger.tokens as { token: string; label: string }[]
    for (const token of tokens) {
      expect(text.stdout).toMatch(
        new RegExp(`^ {2}wallet ${literal(token.label)} .* reconciled$`, 'm'),
      )
    }
    expect(text.stdout).not.toContain('DOES NOT RECONCILE')

    // Grouped by its token column, the CSV never adds two assets together: each group sums to that
    // token's change in balance.
    const rows = parse(csv.stdout, { columns: true }) as Record<string, string>[]
    expect(new Set(tokens.map((token) => token.label)).size).toBe(tokens.length)
    const byToken = new Map<string, bigint>()
    for (const row of rows)
      byToken.set(
        row.token as string,
        (byToken.get(row.token as string) ?? 0n) + units(row.amount as string),
      )
    const summaries = ledger.tokens as {
      label: string
      openingBalance: JsonAmount
      closingBalance: JsonAmount
    }[]
    for (const token of summaries.filter((t) => byToken.has(t.label))) {
      expect(byToken.get(token.label), token.label).toBe(
        BigInt(token.closingBalance.atomic) - BigInt(token.openingBalance.atomic),
      )
    }
    expect([...byToken.keys()].every((label) => summaries.some((t) => t.label === label))).toBe(
      true,
    )
    const types = rows.map((row) => row.type)
    expect(types.filter((type) => type === 'self-payment')).toHaveLength(4)
    expect(types).toContain('transfer in')
    expect(types).toContain('x402 settlement')
  })

  if (options.chain === 'base')
    it('--since reaches back to where the chain’s history begins, and lists the history', async () => {
      const output = await runCli(
        [
          'ledger',
          '--chain',
          'base',
          '--addresses',
          addressesPath,
          '--wallet',
          devnet.accounts.merchant.address,
          '--since',
          '365d',
          '--json',
        ],
        { BASE_MAINNET_RPC_URL: devnet.rpcUrl },
      )
      expect(output.stderr).toBe('')
      expect(output.code).toBe(0)
      const since = JSON.parse(output.stdout)
      expect(since.reconciled).toBe(true)
      expect(BigInt(since.opening.blockNumber)).toBeLessThan(history.fromBlock)
      const txs = since.entries.map((entry: JsonEntry) => entry.txHash)
      expect(txs.slice(-ledger.entries.length)).toEqual(ledger.entries.map((e) => e.txHash))
    })

  if (options.chain === 'base-sepolia')
    it('an RPC that refuses wide log ranges: the scan narrows its ranges and lists the same', async () => {
      const proxy: CountingProxy = await startCountingProxy(devnet.rpcUrl)
      try {
        // HTTP 413 (the answer would be too large) for any eth_getLogs over more than 4 blocks.
        proxy.setInterceptor((calls) =>
          calls.some((call) => {
            const filter = call.params?.[0] as { fromBlock?: string; toBlock?: string } | undefined
            return (
              call.method === 'eth_getLogs' &&
              filter?.fromBlock !== undefined &&
              filter.toBlock !== undefined &&
              BigInt(filter.toBlock) - BigInt(filter.fromBlock) + 1n > 4n
            )
          })
            ? 413
            : undefined,
        )
        const output = await run(['--json'], proxy.url)
        expect(output.stderr).toBe('')
        expect(output.code).toBe(0)
        expect(JSON.parse(output.stdout)).toEqual(ledger)
      } finally {
        await proxy.close()
      }
    })

  if (options.chain === 'base-sepolia')
    it('--html writes a page that draws its chart offline, fits a phone and a laptop, and prints every figure on A4', async () => {
      const folder = await tempFolder('x402-vault-ledger-')
      const path = join(folder, 'ledger.html')
      const output = await run(['--html', path])
      expect(output.code).toBe(0)
      expect(output.stdout).toContain(`Report written to ${path}`)
      expect(output.stdout).toContain('reconciled')
      expect(await readFile(path, 'utf8')).toMatch(/^<!doctype html>/)

      const browser = await launchChromium()
      try {
        for (const viewport of [
          { width: 1280, height: 800 },
          { width: 390, height: 844 },
        ]) {
          // Under LANG=C Chromium's default locale is "en-US@posix", which Intl (and so uPlot's time
          // axis) refuses; a desktop browser has a real one.
          const page = await browser.newPage({ locale: 'en-US', viewport })
          const problems: string[] = []
          const requests: string[] = []
          page.on('console', (message) => {
            if (message.type() === 'error' || message.type() === 'warning')
              problems.push(message.text())
          })
          page.on('pageerror', (error) => problems.push(error.message))
          page.on('request', (request) => requests.push(request.url()))
          const url = pathToFileURL(path).href
          await page.goto(url, { waitUntil: 'load' })
          await page.waitForSelector('#chart canvas')
          const screenshot = await saveScreenshot(page, `ledger-${viewport.width}px.png`)
          const at = `at ${viewport.width} px (screenshot: ${screenshot})`
          expect(problems, at).toEqual([])
          expect(requests, at).toEqual([url])
          expect
            .soft(await overflowing(page), `nothing reaches past the viewport ${at}`)
            .toEqual([])

          const shown = await page.$$eval('[data-total]', (cells) =>
            cells.map((cell) => [cell.getAttribute('data-total'), cell.textContent]),
          )
          const totals = ledger.totals as Record<string, JsonAmount>
          expect(shown.length).toBeGreaterThanOrEqual(8)
          for (const [key, text] of shown) expect(text, at).toBe(totals[key as string]?.usdc)
          const rows = await page.$$eval('#entries tbody tr', (trs) => trs.length)
          expect(rows).toBe(ledger.entries.length)
          const selfRows = await page.$$eval('#entries tbody tr.self-payment', (trs) => trs.length)
          expect(selfRows).toBe(ledger.entries.filter((e) => e.kind === 'self-payment').length)
          expect(selfRows).toBe(4)
          // The chart's legend names each series; the x402 settlements are on it.
          const legend = await page.$$eval('.u-legend .u-label', (labels) =>
            labels.map((label) => label.textContent),
          )
          expect(legend).toContain('x402 settlement')
          // Away from the chart the legend shows values (the closing ones), not blanks or "--".
          const values = await page.$$eval('.u-legend .u-value', (cells) =>
            cells.map((cell) => cell.textContent),
          )
          expect(
            values.filter((value) => !value || value === '--'),
            at,
          ).toEqual([])

          if (viewport.width === 1280) {
            const pdf = await page.pdf({ format: 'A4', printBackground: true })
            const pdfPath = join(artifacts, 'ledger-a4.pdf')
            await writeFile(pdfPath, pdf)
            const printed = await pdfText(pdf)
            const where = `in the A4 printout (${pdfPath})`
            expect.soft(printed.cutOff, `text cut off ${where}`).toEqual([])
            await page.emulateMedia({ media: 'print' })
            const cells = (selector: string) =>
              page.$$eval(selector, (elements) =>
                elements.map((element) =>
                  // biome-ignore lint/performance/useDomNodeTextContent: the text as laid out for print, line breaks included
                  (element as HTMLElement).innerText.replace(/\s+/g, ' ').trim(),
                ),
              )
            const reconciliation = await page.$$eval('.reconciliation tr', (trs) =>
              trs.map((tr) =>
                Array.from((tr as HTMLTableRowElement).cells).map((cell) =>
                  // biome-ignore lint/performance/useDomNodeTextContent: the text as laid out for print, line breaks included
                  cell.innerText.replace(/\s+/g, ' ').trim(),
                ),
              ),
            )
            expect(reconciliation.length).toBeGreaterThanOrEqual(4)
            for (const row of reconciliation) {
              for (const cell of row.filter(Boolean))
                expect.soft(printed.text, where).toContain(cell)
            }
            const states = reconciliation.slice(1).map((row) => row.at(-1))
            expect(states.filter((state) => state === 'reconciled').length).toBeGreaterThanOrEqual(
              3,
            )
            for (const text of [...(await cells('.totals dt')), ...(await cells('.totals dd'))])
              expect.soft(printed.text, where).toContain(text)
            for (const text of await cells('#entries th, #entries td'))
              expect.soft(printed.text, where).toContain(text)
          }
          await page.close()
        }
      } finally {
        await browser.close()
      }
    })
})
