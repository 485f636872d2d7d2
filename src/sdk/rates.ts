/** 1e27: a rate of 100 % in ray. */
export const RAY = 10n ** 27n

/**
 * Formats an annualised rate in ray (1e27 = 100 %) as a percentage string, rounded half up.
 * The rate is shown as the protocol reports it (no compounding is applied).
 *
 * @param ray - The rate in ray.
 * @param decimals - Digits after the point (0–20). Default 2.
 * @returns Such as `'4.50%'`.
 * @example
 * formatRayPercent(45n * 10n ** 24n) // '4.50%'
 */
export function formatRayPercent(ray: bigint, decimals = 2): string {
  if (!Number.isInteger(decimals) || decimals < 0 || decimals > 20)
    throw new RangeError('decimals must be 0–20')
  const negative = ray < 0n
  const abs = negative ? -ray : ray
  // percent × 10^decimals = ray × 100 × 10^decimals / 1e27
  const divisor = RAY / 10n ** BigInt(decimals + 2) || 1n
  const scaled =
    decimals + 2 <= 27 ? (abs + divisor / 2n) / divisor : abs * 10n ** BigInt(decimals + 2 - 27)
  const unit = 10n ** BigInt(decimals)
  const whole = scaled / unit
  const fraction = decimals ? `.${(scaled % unit).toString().padStart(decimals, '0')}` : ''
  return `${negative ? '-' : ''}${whole}${fraction}%`
}
