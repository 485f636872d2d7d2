import { UnavailableFieldError } from './errors/classes.js'
import type { VaultErrorCode, VaultErrorDetails } from './errors/codes.js'
import { toVaultError } from './errors/toVaultError.js'

/**
 * A read value that could not be read: the sub-read reverted or returned nothing. The rest of the
 * read still answered. `reason` is a sentence; `code` is the stable error code of what happened
 * (for example `CONTRACT_REVERT`, `MORPHO_UNREACHABLE`, `NO_SAFE_VAULT`).
 */
export type Unavailable = {
  readonly unavailable: true
  readonly code: VaultErrorCode
  readonly reason: string
  /** The decoded Solidity error name, when the sub-read reverted with a known error. */
  readonly errorName?: string
}

/** Either the value or `Unavailable` (check with `isUnavailable`). */
export type Field<T> = T | Unavailable

/**
 * Tells whether a read field is unavailable.
 *
 * @param value - A field of a read result.
 * @returns `true` for `Unavailable`.
 * @example
 * const status = await vault.getStatus()
 * if (isUnavailable(status.totalAssets)) console.log(status.totalAssets.reason)
 */
export function isUnavailable(value: unknown): value is Unavailable {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as { unavailable?: unknown }).unavailable === true &&
    typeof (value as { reason?: unknown }).reason === 'string'
  )
}

/**
 * Returns a field's value, or throws `UnavailableFieldError` (code `FIELD_UNAVAILABLE`).
 *
 * @param value - The field.
 * @param name - The field's name, for the message.
 * @returns The value.
 * @example
 * const totalAssets = unwrapField(status.totalAssets, 'totalAssets')
 */
export function unwrapField<T>(value: Field<T>, name = 'field'): T {
  if (isUnavailable(value)) {
    const details: VaultErrorDetails = { reasonCode: value.code }
    if (value.errorName) details.errorName = value.errorName
    throw new UnavailableFieldError({ field: name, reason: value.reason, details })
  }
  return value
}

/**
 * Makes an `Unavailable` from any error (decoded and redacted like every SDK error).
 *
 * @param error - Why the field could not be read.
 * @returns The `Unavailable` value.
 * @example
 * unavailable(new Error('boom')).reason // 'boom'
 */
export function unavailable(error: unknown): Unavailable {
  const vaultError = toVaultError(error)
  const errorName = (vaultError.details as { errorName?: unknown }).errorName
  return {
    unavailable: true,
    code: vaultError.code,
    reason: vaultError.message,
    ...(typeof errorName === 'string' ? { errorName } : {}),
  }
}

/**
 * Maps a field's value, keeping `Unavailable` as is.
 *
 * @param value - The field.
 * @param fn - The mapping.
 * @returns The mapped field.
 * @example
 * mapField(status.totalAssets, formatUsdc)
 */
export function mapField<T, U>(value: Field<T>, fn: (value: T) => U): Field<U> {
  return isUnavailable(value) ? value : fn(value)
}
