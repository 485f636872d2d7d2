import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { readBody } from '../../harness/countingProxy.js'
import { nodeHttpFetch } from '../../src/sdk/shared.js'

/**
 * What the proxy does to one request: forward it after a delay, answer it with `body` itself, or
 * forward it and drop the connection once the target has answered (`dropAnswer`: the service acted on
 * the request, and its caller never hears so).
 */
export type HttpFault =
  | { delayMs: number }
  | { status: number; body: string }
  | { dropAnswer: true }

/**
 * An HTTP proxy for any service with paths (such as an x402 facilitator: `/supported`, `/verify`,
 * `/settle`): it forwards each request, method, path and body, to `targetUrl`, unless a rule gives
 * it a fault.
 */
export type HttpFaultProxy = {
  url: string
  /** Decides each request's fault by its path; `undefined` forwards it faithfully. */
  setRule: (rule: ((path: string) => HttpFault | undefined) | undefined) => void
  /** The paths of the requests received, in order. */
  readonly paths: readonly string[]
  close: () => Promise<void>
}

/**
 * Starts an HTTP fault proxy on 127.0.0.1 in front of `targetUrl`.
 *
 * @param targetUrl - The service's base URL.
 * @returns The proxy.
 * @example
 * const facilitator = await startHttpFaultProxy(devnet.facilitatorUrl)
 * facilitator.setRule((path) => (path.endsWith('/settle') ? { delayMs: 500 } : undefined))
 */
export async function startHttpFaultProxy(targetUrl: string): Promise<HttpFaultProxy> {
  let rule: ((path: string) => HttpFault | undefined) | undefined
  const paths: string[] = []
  const server = createServer(async (request, response) => {
    const path = request.url ?? '/'
    paths.push(path)
    const body = await readBody(request)
    const fault = rule?.(path)
    if (fault && 'status' in fault) {
      response.writeHead(fault.status, { 'Content-Type': 'application/json' }).end(fault.body)
      return
    }
    if (fault && 'delayMs' in fault) {
      await new Promise((resolve) => setTimeout(resolve, fault.delayMs))
    }
    try {
      const forwarded = await nodeHttpFetch(`${targetUrl.replace(/\/$/, '')}${path}`, {
        method: request.method ?? 'GET',
        headers: { 'Content-Type': request.headers['content-type'] ?? 'application/json' },
        ...(body.length > 0 ? { body } : {}),
      })
      if (fault && 'dropAnswer' in fault) {
        await forwarded.arrayBuffer()
        request.socket.destroy()
        return
      }
      response
        .writeHead(forwarded.status, {
          'Content-Type': forwarded.headers.get('content-type') ?? '',
        })
        .end(await forwarded.text())
    } catch {
      response.writeHead(502).end()
    }
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    setRule(next) {
      rule = next
    },
    paths,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections()
        server.close((error) => (error ? reject(error) : resolve()))
      }),
  }
}
