/** Why the devnet could not start or act. */
export type DevnetErrorCode =
  | 'INVALID_OPTIONS'
  | 'ANVIL_NOT_FOUND'
  | 'ANVIL_START_FAILED'
  | 'DEPLOY_FAILED'
  | 'FACILITATOR_START_FAILED'

/** An error from the devnet launcher: a short message, a stable code, details and the cause. */
export class DevnetError extends Error {
  override name = 'DevnetError'
  readonly code: DevnetErrorCode
  readonly details: string | undefined

  constructor(
    message: string,
    options: { code: DevnetErrorCode; details?: string | undefined; cause?: unknown },
  ) {
    super(options.details ? `${message}\n\n${options.details}` : message, { cause: options.cause })
    this.code = options.code
    this.details = options.details
  }
}
