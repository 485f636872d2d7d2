import { createLocalJWKSet, errors, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose'

/** The authorization server could not be read (its metadata or its keys): the check answers 503. */
export class IssuerUnavailableError extends Error {
  override name = 'IssuerUnavailableError'
}

/** The keys of one authorization server, as {@link issuerKeys} fetches and keeps them. */
export type IssuerKeys = {
  /** The `iss` its tokens carry: the issuer its metadata names. */
  issuer: () => Promise<string>
  /** The key a token's header names, for jose's `jwtVerify`. */
  getKey: JWTVerifyGetKey
}

/** How {@link issuerKeys} fetches and keeps the keys. */
export type IssuerKeysOptions = {
  /**
   * The shortest time between two fetches of the keys for an unknown key id, and between two attempts
   * to reach an authorization server that failed, in milliseconds; default 30,000.
   */
  refetchCooldownMs?: number | undefined
  /** How long fetched keys are used before they are fetched again, in milliseconds; default 600,000. */
  maxAgeMs?: number | undefined
  /** How long one fetch may take, in milliseconds; default 5,000. */
  timeoutMs?: number | undefined
}

/**
 * The signing keys an authorization server publishes: its metadata (RFC 8414
 * `/.well-known/oauth-authorization-server`, else OpenID `/.well-known/openid-configuration`) names
 * its `jwks_uri`, read on the first token and kept. The keys are kept `maxAgeMs`; a token naming a key
 * id they lack fetches them again, at most once per `refetchCooldownMs`, so a rotated key is found and
 * a flood of made-up key ids costs the issuer one fetch. An issuer that cannot be reached is tried
 * again after the same cooldown; meanwhile {@link IssuerUnavailableError}. Web-standard `fetch` and
 * WebCrypto only: it runs in Node and in workers.
 *
 * @param issuer - The issuer URL, as the operator configured it.
 * @param options - The cooldown, the keys' age and the fetch timeout.
 * @returns The issuer's `iss` and a key lookup for `jwtVerify`.
 * @example
 * const keys = issuerKeys('https://auth.example.com')
 * await jwtVerify(token, keys.getKey, { issuer: await keys.issuer() })
 */
export function issuerKeys(issuer: string, options: IssuerKeysOptions = {}): IssuerKeys {
  const cooldownMs = options.refetchCooldownMs ?? 30_000
  const maxAgeMs = options.maxAgeMs ?? 600_000
  const timeoutMs = options.timeoutMs ?? 5_000
  let metadata: Promise<IssuerMetadata> | undefined
  let metadataFailedAt = Number.NEGATIVE_INFINITY
  let keys: JWTVerifyGetKey | undefined
  let keysFetchedAt = Number.NEGATIVE_INFINITY
  let keysAttemptedAt = Number.NEGATIVE_INFINITY
  let fetching: Promise<void> | undefined

  const readIssuer = (): Promise<IssuerMetadata> => {
    if (metadata === undefined) {
      if (Date.now() < metadataFailedAt + cooldownMs) {
        return Promise.reject(
          new IssuerUnavailableError(`The authorization server ${issuer} could not be read.`),
        )
      }
      metadata = readMetadata(issuer, timeoutMs).catch((error: unknown) => {
        metadata = undefined
        metadataFailedAt = Date.now()
        throw error
      })
    }
    return metadata
  }

  // One fetch at a time; a failure keeps the keys held before (they are all there is).
  const refetch = (jwksUri: string): Promise<void> => {
    fetching ??= (async () => {
      keysAttemptedAt = Date.now()
      try {
        keys = createLocalJWKSet((await fetchJson(jwksUri, timeoutMs)) as JSONWebKeySet)
        keysFetchedAt = Date.now()
      } finally {
        fetching = undefined
      }
    })()
    return fetching
  }

  const unavailable = (cause: unknown) =>
    new IssuerUnavailableError(
      `The keys of the authorization server ${issuer} could not be fetched.`,
      {
        cause,
      },
    )

  return {
    issuer: async () => (await readIssuer()).issuer,
    async getKey(header, token) {
      const { jwksUri } = await readIssuer()
      const mayFetch = () => Date.now() >= keysAttemptedAt + cooldownMs
      if (keys === undefined || Date.now() >= keysFetchedAt + maxAgeMs) {
        if (mayFetch()) await refetch(jwksUri).catch(() => {})
        if (keys === undefined) throw unavailable(undefined)
      }
      try {
        return await keys(header, token)
      } catch (error) {
        // A key id the keys lack: the issuer may have rotated its keys since they were fetched.
        if (!(error instanceof errors.JWKSNoMatchingKey) || !mayFetch()) throw error
        await refetch(jwksUri).catch((cause: unknown) => {
          throw unavailable(cause)
        })
        return keys(header, token)
      }
    },
  }
}

type IssuerMetadata = { issuer: string; jwksUri: string }

/** A JSON document by GET, within the timeout, redirects not followed. */
async function fetchJson(url: string, timeoutMs: number): Promise<unknown> {
  const response = await fetch(url, {
    headers: { accept: 'application/json' },
    redirect: 'manual',
    signal: AbortSignal.timeout(timeoutMs),
  })
  if (response.status !== 200) throw new Error(`${url} answered ${response.status}`)
  return response.json()
}

/** The issuer's metadata: the first of RFC 8414's and OpenID's locations that answers it. */
async function readMetadata(issuer: string, timeoutMs: number): Promise<IssuerMetadata> {
  const url = new URL(issuer)
  const path = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '')
  const locations = [
    `${url.origin}/.well-known/oauth-authorization-server${path}`,
    `${url.origin}${path}/.well-known/openid-configuration`,
  ]
  let failure: unknown
  for (const location of locations) {
    try {
      const metadata = (await fetchJson(location, timeoutMs)) as {
        issuer?: unknown
        jwks_uri?: unknown
      }
      // RFC 8414 §3.3: metadata naming another issuer than the one asked about must not be used.
      if (
        typeof metadata.issuer !== 'string' ||
        metadata.issuer.replace(/\/$/, '') !== issuer.replace(/\/$/, '')
      ) {
        throw new Error(`${location} names another issuer`)
      }
      if (typeof metadata.jwks_uri !== 'string' || !/^https?:\/\//.test(metadata.jwks_uri)) {
        throw new Error(`${location} names no jwks_uri`)
      }
      return { issuer: metadata.issuer, jwksUri: metadata.jwks_uri }
    } catch (error) {
      failure = error
    }
  }
  throw new IssuerUnavailableError(
    `The metadata of the authorization server ${issuer} could not be read (${failure instanceof Error ? failure.message : failure}).`,
    { cause: failure },
  )
}
