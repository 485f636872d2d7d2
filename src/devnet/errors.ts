import { VaultError, type VaultErrorCode, type VaultErrorOptions } from '../index.js'

/** Why the devnet could not start or act: the devnet's own section of `vaultErrorCodes`. */
export type DevnetErrorCode = Extract<
  VaultErrorCode,
  | 'INVALID_OPTIONS'
  | 'ANVIL_NOT_FOUND'
  | 'ANVIL_START_FAILED'
  | 'DEPLOY_FAILED'
  | 'FACILITATOR_START_FAILED'
>

/**
 * An error from the devnet launcher: a short message, a stable code, details and the cause. Its
 * category is `devnet`.
 *
 * The message is the short message, then, after a blank line, the `metaMessages`: what to do, or what
 * anvil printed before it failed. Someone starting the devnet from a terminal reads only the message,
 * so it carries everything they need to fix the problem.
 *
 * @example
 * new DevnetError('anvil exited during start-up (code 1).', {
 *   code: 'ANVIL_START_FAILED',
 *   details: { exitCode: 1, output },
 *   metaMessages: [output],
 * })
 */
export class DevnetError extends VaultError {
  override name = 'DevnetError'
  declare readonly code: DevnetErrorCode

  /**
   * @param shortMessage - What failed, in one sentence.
   * @param options - The code, and optionally details, the cause, and `metaMessages`: lines that
   *   follow the short message after a blank line (empty ones are left out).
   */
  constructor(
    shortMessage: string,
    options: Omit<VaultErrorOptions, 'code' | 'retryable'> & {
      code: DevnetErrorCode
      metaMessages?: readonly (string | undefined)[] | undefined
    },
  ) {
    const { metaMessages = [], ...common } = options
    const lines = metaMessages.filter((line): line is string => Boolean(line))
    super(lines.length ? `${shortMessage}\n\n${lines.join('\n')}` : shortMessage, {
      ...common,
      category: 'devnet',
    })
  }
}
