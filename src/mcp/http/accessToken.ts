import { errors, jwtVerify } from 'jose'
import { type HttpRefusal, type HttpRequestFacts, refuse } from './check.js'
import { IssuerUnavailableError, issuerKeys } from './issuerKeys.js'
import { type McpOAuthOptions, resourceMetadata } from './resourceMetadata.js'

/** A check that must wait (for a signature, for the issuer's keys) before it answers. */
export type AsyncHttpCheck = (request: HttpRequestFacts) => Promise<HttpRefusal | undefined>

/** Asymmetric algorithms only: a shared-secret or unsigned token could be made by anyone. */
const algorithms = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
]

/** Seconds a token's `exp` and `nbf` may be off, for clocks that differ a little. */
const clockToleranceSeconds = 30

/**
 * Refuses a request without a valid OAuth access token (RFC 6750, as the MCP specification's
 * authorization section asks of a server): 401 with `WWW-Authenticate: Bearer resource_metadata="…"`
 * naming the protected-resource metadata when there is no token, plus `error="invalid_token"` when the
 * token is expired, not yet valid, for another audience (RFC 8707), from another issuer, or not signed
 * by a key the issuer publishes; 403 `error="insufficient_scope"` when it lacks a required scope; 503
 * with `Retry-After` while the issuer's metadata or keys cannot be fetched. The refusal says what is
 * wrong, never what the token holds.
 *
 * @param oauth - The issuer, the resource (the audience) and the required scopes.
 * @param onIssuerUnavailable - Told, without the token, why the issuer could not be read.
 * @returns The check.
 * @example
 * accessToken({ issuer: 'https://auth.example.com', resource: 'https://mcp.example.com/mcp' })
 */
export function accessToken(
  oauth: McpOAuthOptions,
  onIssuerUnavailable: (message: string) => void = () => {},
): AsyncHttpCheck {
  const keys = issuerKeys(oauth.issuer, { refetchCooldownMs: oauth.keysRefetchCooldownMs })
  const metadataUrl = resourceMetadata(oauth).url
  const required = oauth.scopes ?? []
  const scopeParameter = required.length > 0 ? `, scope="${required.join(' ')}"` : ''
  const challenge = (error?: string, description?: string) =>
    `Bearer resource_metadata="${metadataUrl}"${scopeParameter}${error ? `, error="${error}", error_description="${description}"` : ''}`
  const invalid = (description: string) =>
    refuse(401, 'INVALID_TOKEN', `The access token was refused: ${description}.`, {
      headers: { 'www-authenticate': challenge('invalid_token', description) },
    })

  return async ({ headers }) => {
    const authorization = headers.get('authorization')
    const match = /^Bearer +([A-Za-z0-9\-._~+/]+=*) *$/i.exec(authorization ?? '')
    if (match?.[1] === undefined) {
      if (authorization !== null)
        return invalid('send it in the header Authorization: Bearer <token>')
      return refuse(
        401,
        'UNAUTHORIZED',
        `This server needs an OAuth access token from ${oauth.issuer} for ${oauth.resource}, sent as "Authorization: Bearer <token>"; its protected-resource metadata is at ${metadataUrl}.`,
        { headers: { 'www-authenticate': challenge() } },
      )
    }
    let scopes: string[]
    try {
      const { payload } = await jwtVerify(match[1], keys.getKey, {
        issuer: await keys.issuer(),
        audience: oauth.resource,
        algorithms,
        clockTolerance: clockToleranceSeconds,
        requiredClaims: ['exp'],
      })
      scopes = grantedScopes(payload)
    } catch (error) {
      if (error instanceof IssuerUnavailableError) {
        onIssuerUnavailable(error.message)
        return refuse(
          503,
          'AUTHORIZATION_SERVER_UNAVAILABLE',
          `The access token cannot be checked now: the keys of ${oauth.issuer} could not be fetched. Try again shortly.`,
          { headers: { 'retry-after': '30' } },
        )
      }
      return invalid(whyRefused(error))
    }
    const missing = required.filter((scope) => !scopes.includes(scope))
    if (missing.length === 0) return undefined
    return refuse(
      403,
      'INSUFFICIENT_SCOPE',
      `The access token lacks the scope ${missing.join(' ')}: ask ${oauth.issuer} for a token with the scopes ${required.join(' ')}.`,
      {
        headers: {
          'www-authenticate': `Bearer resource_metadata="${metadataUrl}"${scopeParameter}, error="insufficient_scope", error_description="the token lacks a required scope"`,
        },
      },
    )
  }
}

/** The scopes a token grants: `scope` (RFC 9068, space-separated), else `scp` (a list or a string). */
function grantedScopes(payload: Record<string, unknown>): string[] {
  const granted = payload.scope ?? payload.scp
  if (typeof granted === 'string') return granted.split(' ').filter(Boolean)
  if (Array.isArray(granted)) return granted.filter((scope) => typeof scope === 'string')
  return []
}

/** What is wrong with a token, in words fit for `error_description` (no quote, no token content). */
function whyRefused(error: unknown): string {
  if (error instanceof errors.JWTExpired) return 'it has expired'
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === 'aud') return 'it was not issued for this server (its audience)'
    if (error.claim === 'iss') return 'it was not issued by the authorization server'
    if (error.claim === 'nbf') return 'it is not valid yet'
    return `its ${error.claim} claim is invalid`
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) {
    return 'its signature does not verify with the authorization server keys'
  }
  if (
    error instanceof errors.JWKSNoMatchingKey ||
    error instanceof errors.JWKSMultipleMatchingKeys
  ) {
    return 'it is signed with a key the authorization server does not publish'
  }
  if (error instanceof errors.JOSEAlgNotAllowed) return 'its signing algorithm is not accepted'
  return 'it is not a signed JWT access token'
}
