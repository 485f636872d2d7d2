/**
 * Whether a parsed JSON value is an object (not null, not an array): what JSON-RPC params and tool
 * arguments must be. Its own module, so that the stdio start can use it without loading the tools.
 *
 * @param value - Any parsed JSON value.
 * @returns `true` for a JSON object.
 * @example
 * if (!isPlainObject(params)) return refusal
 */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}
