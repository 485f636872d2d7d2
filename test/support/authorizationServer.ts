/**
 * A real OAuth 2.1 authorization server on loopback, for the OAuth tests: `oidc-provider` with dynamic
 * client registration, PKCE, resource indicators (RFC 8707, so that access tokens are JWTs whose `aud`
 * is the resource asked for), the client-credentials grant for tokens the tests shape themselves, and
 * an interaction that logs in and consents at once (no browser). Its signing keys can be rotated.
 */
import { randomBytes } from 'node:crypto'
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { exportJWK, generateKeyPair, type JWK } from 'jose'
import Provider from 'oidc-provider'

/** The scopes this server grants for any resource. */
export const grantedScopes = ['vault:read', 'vault:plan'] as const

/** A client of the client-credentials grant, registered at start. */
const machineClient = { id: 'vault-tests', secret: randomBytes(24).toString('hex') }

export type TestAuthorizationServer = {
  /** `http://127.0.0.1:<port>`, the `iss` of its tokens. */
  issuer: string
  /** Its current signing key, private part included (`kid` set), to shape tokens as it would. */
  signingKey: () => JWK
  /** An access token by the client-credentials grant, for `resource` with `scope`. */
  clientCredentialsToken: (resource: string, scope: string) => Promise<string>
  /** Replaces its signing key by a new one (with a new `kid`); the old one is no longer published. */
  rotateKeys: () => Promise<void>
  /** How many times its key set (`jwks_uri`) was fetched. */
  keySetFetches: () => number
  /** Follows an authorization URL to the redirect back to the client, as a browser would. */
  authorize: (authorizationUrl: URL) => Promise<URL>
  close: () => Promise<void>
}

/** Starts the server on a free loopback port. */
export async function startAuthorizationServer(): Promise<TestAuthorizationServer> {
  let provider: Provider | undefined
  let key = await newSigningKey()
  let keySetFetches = 0
  const server = createServer((request, response) => {
    if (request.url?.startsWith('/jwks')) keySetFetches += 1
    if (request.url?.startsWith('/interaction/') && provider) {
      consentAtOnce(provider, request, response).catch((error: unknown) => {
        response.writeHead(500).end(String(error))
      })
      return
    }
    provider?.callback()(request, response)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const cookieKeys = [randomBytes(32).toString('hex')]
  const build = () => {
    provider = new Provider(issuer, {
      clients: [
        {
          client_id: machineClient.id,
          client_secret: machineClient.secret,
          grant_types: ['client_credentials'],
          redirect_uris: [],
          response_types: [],
        },
      ],
      jwks: { keys: [key] },
      cookies: { keys: cookieKeys },
      ttl: { Interaction: 600, Session: 600, Grant: 600, AccessToken: 600, ClientCredentials: 600 },
      scopes: ['openid', 'offline_access', ...grantedScopes],
      findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id }) }),
      interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
      features: {
        devInteractions: { enabled: false },
        registration: { enabled: true },
        clientCredentials: { enabled: true },
        resourceIndicators: {
          enabled: true,
          defaultResource: (_ctx, _client, oneOf) => oneOf ?? issuer,
          useGrantedResource: () => true,
          getResourceServerInfo: (_ctx, resource) => ({
            scope: grantedScopes.join(' '),
            audience: resource,
            accessTokenTTL: 600,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'RS256' } },
          }),
        },
      },
    })
  }
  build()

  return {
    issuer,
    signingKey: () => key,
    async clientCredentialsToken(resource, scope) {
      const response = await fetch(`${issuer}/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'client_credentials',
          client_id: machineClient.id,
          client_secret: machineClient.secret,
          resource,
          scope,
        }),
      })
      const body = (await response.json()) as { access_token?: string }
      if (response.status !== 200 || !body.access_token) {
        throw new Error(`token request failed: ${response.status} ${JSON.stringify(body)}`)
      }
      return body.access_token
    },
    async rotateKeys() {
      key = await newSigningKey()
      build()
    },
    keySetFetches: () => keySetFetches,
    async authorize(authorizationUrl) {
      // A browser: carries the server's cookies along its redirects, until it leaves for the client.
      const cookies = new Map<string, string>()
      let url = authorizationUrl
      for (let hop = 0; hop < 10; hop += 1) {
        if (url.origin !== issuer) return url
        const response = await fetch(url, {
          redirect: 'manual',
          headers: { cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join('; ') },
        })
        for (const line of response.headers.getSetCookie()) {
          const [pair = ''] = line.split(';')
          const at = pair.indexOf('=')
          cookies.set(pair.slice(0, at), pair.slice(at + 1))
        }
        const location = response.headers.get('location')
        if (location === null) {
          throw new Error(
            `the authorization stopped at ${response.status}: ${await response.text()}`,
          )
        }
        url = new URL(location, url)
      }
      throw new Error('too many redirects')
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}

async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  return {
    ...(await exportJWK(privateKey)),
    kid: randomBytes(8).toString('hex'),
    alg: 'RS256',
    use: 'sig',
  }
}

/** The interaction: the user is logged in as `operator` and grants whatever the client asked. */
async function consentAtOnce(
  provider: Provider,
  request: IncomingMessage,
  response: ServerResponse,
): Promise<void> {
  const details = await provider.interactionDetails(request, response)
  const { prompt, params, session } = details
  if (prompt.name === 'login') {
    await provider.interactionFinished(request, response, { login: { accountId: 'operator' } })
    return
  }
  const grant = details.grantId
    ? await provider.Grant.find(details.grantId)
    : new provider.Grant({
        accountId: session?.accountId ?? 'operator',
        clientId: String(params.client_id),
      })
  if (!grant) throw new Error('the grant is gone')
  const missing = prompt.details as {
    missingOIDCScope?: string[]
    missingResourceScopes?: Record<string, string[]>
  }
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '))
  for (const [resource, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(resource, scopes.join(' '))
  }
  const grantId = await grant.save()
  await provider.interactionFinished(
    request,
    response,
    { consent: { grantId } },
    { mergeWithLastSubmission: true },
  )
}
