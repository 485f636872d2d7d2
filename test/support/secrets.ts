/**
 * The secret tests' parts (`test/secrets.devnet.test.ts`, `test/cli/secrets.devnet.test.ts`): RPC URLs
 * with a marker in each place a provider's key can hide (userinfo, path, query), served by one fault
 * proxy that fails each URL its own way, and the check that finds any secret (a marker, a private
 * key, a bearer token) in text or anywhere in a value, hidden properties and cause chains included.
 */
import { expect } from 'vitest'
import type { CountingProxy, RpcFault } from '../../harness/countingProxy.js'

/** The markers of the secret RPC URL: its user, password, path and query. */
export const urlMarkers = {
  user: 'usrMarkQ7x',
  password: 'pwdMarkK2v',
  path: 'pathMarkZ9w',
  query: 'qryMarkJ4m',
} as const

/** The RPC faults every command and entry point runs under. */
export const rpcFaults = ['down', '500', '401', 'garbage', 'hang'] as const
export type RpcFaultName = (typeof rpcFaults)[number]

/**
 * A secret RPC URL's scenario: a fault for every request, a fault for only the requests that carry an
 * `eth_call` with one selector (`{ fault, selector }`), or a `live` URL whose fault the test switches.
 */
type Scenario = { fault: RpcFaultName; selector?: string | undefined } | { live: string }

/**
 * The fault proxy's secret URLs: each names its scenario in its path, so that one proxy serves every
 * command at once, each failing its own way.
 *
 * @param proxy - The fault proxy in front of the devnet; its rule is set here.
 * @returns `url(scenario)`, and `setLive(name, fault)` for the live URLs (`undefined` heals one).
 * @example
 * const rpc = secretRpc(proxy)
 * await runCli(['status'], { BASE_SEPOLIA_RPC_URL: rpc.url({ fault: '500' }) })
 */
export function secretRpc(proxy: CountingProxy) {
  const live = new Map<string, RpcFaultName | undefined>()
  const scenarios = new Map<string, Scenario>()
  const { host } = new URL(proxy.url)
  const urlOf = (name: string) =>
    `http://${urlMarkers.user}:${urlMarkers.password}@${host}/v2/${urlMarkers.path}/${name}?apikey=${urlMarkers.query}`
  proxy.setRule(({ path, calls }) => {
    const name = /^\/v2\/[^/]+\/([^/?]+)/.exec(path)?.[1]
    const scenario = name === undefined ? undefined : scenarios.get(name)
    if (name === undefined || scenario === undefined) return undefined
    if ('live' in scenario) {
      const fault = live.get(scenario.live)
      return fault && faultOf(fault, urlOf(name))
    }
    const { fault, selector } = scenario
    if (selector && !calls.some((call) => callsSelector(call.params, selector))) return undefined
    return faultOf(fault, urlOf(name))
  })
  return {
    url(scenario: Scenario): string {
      const name =
        'live' in scenario
          ? `live-${scenario.live}`
          : `${scenario.fault}${scenario.selector ? `-${scenario.selector}` : ''}`
      scenarios.set(name, scenario)
      return urlOf(name)
    },
    setLive(name: string, fault: RpcFaultName | undefined): void {
      live.set(name, fault)
    },
  }
}

function callsSelector(params: unknown[] | undefined, selector: string): boolean {
  const call = params?.[0] as { data?: unknown; input?: unknown } | undefined
  const data = call?.data ?? call?.input
  return typeof data === 'string' && data.toLowerCase().startsWith(selector.toLowerCase())
}

/**
 * What the RPC does under each fault. The bodies echo the whole URL, key and all, as some providers
 * and gateways do: the message that reports them must not.
 */
function faultOf(fault: RpcFaultName, echoed: string): RpcFault {
  switch (fault) {
    case 'down':
      return { kind: 'reset' }
    case '500':
      return {
        kind: 'status',
        status: 500,
        contentType: 'application/json',
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 1,
          error: { code: -32603, message: `upstream failed for ${echoed}` },
        }),
      }
    case '401':
      return {
        kind: 'status',
        status: 401,
        contentType: 'application/json',
        body: JSON.stringify({ error: `invalid API key: ${echoed}` }),
      }
    case 'garbage':
      return {
        kind: 'status',
        status: 200,
        contentType: 'text/html',
        body: `<html><body><h1>502 Bad Gateway</h1><p>while serving ${echoed}</p></body></html>`,
      }
    case 'hang':
      return { kind: 'hang' }
  }
}

/** A call of each MCP tool, with input that reaches the RPC. */
export function mcpToolCalls(wallet: string): [string, Record<string, unknown>][] {
  return [
    ['vault_status', {}],
    ['vault_check_yield', {}],
    ['vault_get_position', { wallet }],
    ['vault_plan_approve_usdc', { wallet, amountUsdc: '10' }],
    ['vault_plan_deposit', { wallet, amountUsdc: '10' }],
    ['vault_plan_withdraw', { wallet, amountUsdc: '5' }],
  ]
}

/**
 * Finds secrets in text: each one's name, for the secrets it contains (keys are matched without their
 * `0x` and in any case).
 */
export class SecretFinder {
  private readonly secrets = new Map<string, string>(
    Object.entries(urlMarkers).map(([name, marker]) => [`the URL's ${name}`, marker.toLowerCase()]),
  )

  /** Adds a secret, such as a private key or a bearer token. */
  add(name: string, secret: string): this {
    this.secrets.set(name, secret.replace(/^0x/i, '').toLowerCase())
    return this
  }

  /** The names of the secrets `text` holds. */
  in(text: string): string[] {
    const lower = text.toLowerCase()
    return [...this.secrets].filter(([, secret]) => lower.includes(secret)).map(([name]) => name)
  }

  /** Fails when `text` holds any secret, quoting it where it shows one. */
  expectNoneIn(text: string, where: string): void {
    const found = this.in(text)
    expect(found, `${where} shows ${found.join(', ')}:\n${excerpt(text, this.secrets)}`).toEqual([])
  }

  /**
   * Fails when any string reachable from `value` holds a secret: its message, `details`, `cause` chain,
   * stack and every other own property, hidden ones included.
   */
  expectNoneInValue(value: unknown, where: string): void {
    this.expectNoneIn(stringsIn(value).join('\n'), where)
  }
}

/** The lines of `text` that show a secret. */
function excerpt(text: string, secrets: Map<string, string>): string {
  return text
    .split('\n')
    .filter((line) => [...secrets.values()].some((secret) => line.toLowerCase().includes(secret)))
    .slice(0, 6)
    .join('\n')
}

/** Every string reachable from `value` through own properties, hidden ones included. */
export function stringsIn(value: unknown, seen = new Set<unknown>()): string[] {
  if (typeof value === 'string') return [value]
  if (typeof value !== 'object' || value === null || seen.has(value)) return []
  seen.add(value)
  const strings: string[] = []
  for (const key of Reflect.ownKeys(value)) {
    const descriptor = Object.getOwnPropertyDescriptor(value, key)
    // V8 may give an error's `stack` as an accessor: what a logger prints is its value.
    const own = descriptor && 'get' in descriptor ? Reflect.get(value, key) : descriptor?.value
    strings.push(...stringsIn(own, seen))
  }
  return strings
}
