/**
 * The p-th percentile of some measurements (nearest rank): 50 is the median.
 *
 * @param values - The measurements; at least one.
 * @param p - From 0 to 100.
 * @returns One of the values.
 * @example
 * percentile([3, 1, 2], 50) // 2
 */
export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  const index = Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)
  return sorted[Math.max(0, index)] ?? Number.NaN
}

/** Milliseconds to two decimals, for the report. */
export function roundMs(ms: number): number {
  return Math.round(ms * 100) / 100
}
