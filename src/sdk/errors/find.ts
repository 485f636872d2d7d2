/**
 * Finding an error in a cause chain by its `name`, not by `instanceof`.
 *
 * The viem that built the caller's clients and transport is often another copy than the SDK's: another
 * version (the SDK pins its own), or the copy bundled into the SDK's build. A class from one copy is not
 * an instance of the same class from the other, but viem names every error class (`HttpRequestError`,
 * `ContractFunctionRevertedError`, …), and those names are the same in every copy.
 */

/** What an error in a chain looks like: a name, a message and any fields of its class. */
export type ErrorLike = Error & Record<string, unknown>

/**
 * The first error in `error`'s cause chain (itself, its `cause`, that one's `cause`, …) for which
 * `test` holds.
 */
export function findCause<T = ErrorLike>(
  error: unknown,
  test: (candidate: ErrorLike) => boolean,
): T | undefined {
  // A cause chain is short; the bound only guards against a cycle.
  for (let current = error, depth = 0; depth < 32; depth++) {
    if (!(current instanceof Error)) return undefined
    if (test(current as ErrorLike)) return current as T
    current = current.cause
  }
  return undefined
}

/** The first error in the cause chain whose `name` is one of `names`. */
export function findError<T = ErrorLike>(error: unknown, ...names: string[]): T | undefined {
  return findCause<T>(error, (candidate) => names.includes(candidate.name))
}
