import type { IncomingMessage, RequestOptions } from 'node:http'

/**
 * Node's `http` and `https`, read when first sent with rather than imported: the SDK's
 * shared chunks reach the plugins, which must stay importable where Node's modules do not exist (an
 * edge runtime). `null` where there is no `process.getBuiltinModule` (Node before 20.16).
 */
type NodeModules = {
  http: typeof import('node:http')
  https: typeof import('node:https')
}
let nodeModules: NodeModules | null | undefined

function loadNodeModules(): NodeModules | null {
  if (nodeModules !== undefined) return nodeModules
  const builtins = (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } })
    .process
  nodeModules =
    typeof builtins?.getBuiltinModule === 'function'
      ? {
          http: builtins.getBuiltinModule('node:http') as NodeModules['http'],
          https: builtins.getBuiltinModule('node:https') as NodeModules['https'],
        }
      : null
  return nodeModules
}

/** Statuses whose response has no body, so `Response` takes none. */
const nullBodyStatuses = new Set([101, 204, 205, 304])
/** Redirects `fetch` follows, and how many at most (its own limit). */
const redirectStatuses = new Set([301, 302, 303, 307, 308])
const maxRedirects = 20

/**
 * `fetch` for JSON-RPC over Node's own `http` and `https` modules, for the processes the package
 * starts (the CLI's commands and the stdio MCP server), which each send their first request soon after
 * they start. Node's `fetch` sets up its HTTP client on a process's first request: on Node 20 that
 * costs about 0.3 s of CPU and of wall time (it compiles undici's HTTP parser, a WebAssembly module),
 * on Node 22 to 26 about 0.1 s; a request through `http` costs a few milliseconds. An app that keeps
 * running pays that once, so the SDK's own default stays `fetch`, which every runtime has.
 *
 * It does what `fetch` does for the requests viem's HTTP transport sends: a method, headers and a
 * string or byte body, the caller's `AbortSignal` (it rejects with its reason, also while the body
 * arrives), redirects followed as `fetch` follows them, and a real `Response`, given once its body has
 * arrived whole (viem's timeout covers both, and its size limit still applies). A network failure, or
 * a body cut short, rejects as `fetch` does, with `TypeError('fetch failed')` and the system error as
 * its cause. Anything else it is given (another protocol, a `Request`, a `FormData` or stream body,
 * `redirect: 'manual'`), or anything sent where Node's modules cannot be read, goes to the global
 * `fetch`.
 *
 * @param input - The URL.
 * @param init - `method`, `headers`, `body`, `signal`, `redirect`.
 * @returns The response, its body read and held.
 * @example
 * const transport = vaultHttp(rpcUrl, { fetchFn: nodeHttpFetch })
 */
export function nodeHttpFetch(input: string | URL | Request, init: RequestInit = {}) {
  const body = init.body ?? undefined
  const modules = loadNodeModules()
  if (
    !modules ||
    input instanceof Request ||
    !(body === undefined || typeof body === 'string' || body instanceof Uint8Array) ||
    (init.redirect !== undefined && init.redirect !== 'follow')
  ) {
    return fetch(input, init)
  }
  const url = new URL(input)
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return fetch(input, init)
  const headers: Record<string, string> = {}
  new Headers(init.headers).forEach((value, name) => {
    headers[name] = value
  })
  const method = (init.method ?? 'GET').toUpperCase()
  return send(modules, url, method, headers, body, init.signal ?? undefined, 0)
}

function send(
  modules: NodeModules,
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | Uint8Array | undefined,
  signal: AbortSignal | undefined,
  redirects: number,
): Promise<Response> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason)
      return
    }
    const options: RequestOptions = {
      method,
      headers: body === undefined ? headers : { ...headers, 'content-length': byteLength(body) },
    }
    const request = (url.protocol === 'https:' ? modules.https : modules.http).request(url, options)
    let response: IncomingMessage | undefined
    const onAbort = () => {
      // Whether the answer has begun or not, nothing more is read and the request rejects.
      request.destroy(signal?.reason)
      response?.destroy(signal?.reason)
      reject(signal?.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
    const settle = () => signal?.removeEventListener('abort', onAbort)
    request.on('error', (error) => {
      settle()
      reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }))
    })
    request.on('response', (answer) => {
      response = answer
      const status = answer.statusCode ?? 0
      const location = answer.headers.location
      if (redirectStatuses.has(status) && location !== undefined) {
        answer.resume()
        settle()
        if (redirects >= maxRedirects) {
          reject(new TypeError('fetch failed', { cause: new Error('redirect count exceeded') }))
          return
        }
        // As `fetch`: a 303, or a 301/302 after a POST, goes on as a GET without the body.
        const toGet = status === 303 || ((status === 301 || status === 302) && method === 'POST')
        const next = new URL(location, url)
        const nextHeaders = toGet ? withoutBodyHeaders(headers) : { ...headers }
        if (next.origin !== url.origin) delete nextHeaders.authorization
        resolve(
          send(
            modules,
            next,
            toGet && method !== 'HEAD' ? 'GET' : method,
            nextHeaders,
            toGet ? undefined : body,
            signal,
            redirects + 1,
          ),
        )
        return
      }
      // The body is read whole before the response is given: JSON-RPC answers are small, and a body
      // cut short (the connection closed, the caller's signal) fails the request as `fetch` fails it.
      const chunks: Buffer[] = []
      answer.on('data', (chunk: Buffer) => chunks.push(chunk))
      answer.on('error', (error) => {
        settle()
        reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }))
      })
      answer.on('close', () => {
        if (answer.complete) return
        settle()
        reject(
          signal?.aborted
            ? signal.reason
            : new TypeError('fetch failed', { cause: new Error('the answer was cut short') }),
        )
      })
      answer.on('end', () => {
        settle()
        try {
          const responseHeaders = new Headers()
          for (let i = 0; i + 1 < answer.rawHeaders.length; i += 2) {
            responseHeaders.append(
              answer.rawHeaders[i] as string,
              answer.rawHeaders[i + 1] as string,
            )
          }
          const hasBody = method !== 'HEAD' && !nullBodyStatuses.has(status)
          const result = new Response(hasBody ? Buffer.concat(chunks) : null, {
            status,
            statusText: answer.statusMessage ?? '',
            headers: responseHeaders,
          })
          Object.defineProperty(result, 'url', { value: url.href })
          resolve(result)
        } catch (error) {
          // A status `Response` does not take (outside 200 to 599): `fetch` fails on it too.
          reject(new TypeError('fetch failed', { cause: error }))
        }
      })
    })
    request.end(body)
  })
}

function byteLength(body: string | Uint8Array): number {
  return typeof body === 'string' ? Buffer.byteLength(body) : body.byteLength
}

function withoutBodyHeaders(headers: Record<string, string>): Record<string, string> {
  const { 'content-type': _type, 'content-length': _length, ...rest } = headers
  return rest
}
