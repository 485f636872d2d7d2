import { describe, expect, it } from 'vitest'
import { GAS_MARGIN_MIN, withGasMargin } from '../../src/sdk/internal/write.js'

describe('withGasMargin', () => {
  it('adds at least GAS_MARGIN_MIN, so a cheap call survives an accrual path its estimate missed', () => {
    expect(withGasMargin(30_000n)).toBe(30_000n + GAS_MARGIN_MIN)
    expect(withGasMargin(0n)).toBe(GAS_MARGIN_MIN)
  })

  it('adds 30 % once that is more than the minimum, rounding the margin down', () => {
    expect(withGasMargin(1_000_000n)).toBe(1_300_000n)
    expect(withGasMargin(333_334n)).toBe(333_334n + 100_000n)
    expect(withGasMargin(333_337n)).toBe(333_337n + 100_001n)
  })
})
