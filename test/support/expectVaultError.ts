import { expect } from 'vitest'
import { VaultError } from '../../src/index.js'

/** Awaits a rejection and checks it is a `VaultError` with the code. */
export async function expectVaultError(
  promise: Promise<unknown>,
  code: string,
): Promise<VaultError> {
  try {
    await promise
  } catch (error) {
    expect(error, String(error)).toBeInstanceOf(VaultError)
    expect((error as VaultError).code, (error as VaultError).message).toBe(code)
    return error as VaultError
  }
  throw new Error(`expected a VaultError ${code}, but the call succeeded`)
}
