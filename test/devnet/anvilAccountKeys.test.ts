import { mnemonicToAccount } from 'viem/accounts'
import { describe, expect, it } from 'vitest'
import { anvilAccountKeys } from '../../src/devnet/startDevnet.js'

describe('the devnet’s account keys', () => {
  it('are anvil’s funded accounts 0 to 3: derived from its test mnemonic, in order', () => {
    const mnemonic = 'test test test test test test test test test test test junk'
    const derived = Object.keys(anvilAccountKeys).map((_, addressIndex) => {
      const key = mnemonicToAccount(mnemonic, { addressIndex }).getHdKey().privateKey
      return key ? Buffer.from(key).toString('hex') : undefined
    })
    expect(Object.values(anvilAccountKeys).map((key) => key.slice(2))).toEqual(derived)
  })
})
