import { describe, expect, it } from 'vitest'
import { rpcTransportOptions } from '../../src/cli/connect.js'
import { UsageError } from '../../src/cli/usageError.js'

describe('VAULT_RPC_TIMEOUT', () => {
  it('sets the seconds one RPC request may take; unset or empty keeps the transport’s 10 s', () => {
    expect(rpcTransportOptions({})).toEqual({})
    expect(rpcTransportOptions({ VAULT_RPC_TIMEOUT: '' })).toEqual({})
    expect(rpcTransportOptions({ VAULT_RPC_TIMEOUT: '2' })).toEqual({ timeout: 2_000 })
    expect(rpcTransportOptions({ VAULT_RPC_TIMEOUT: '0.5' })).toEqual({ timeout: 500 })
    expect(rpcTransportOptions({ VAULT_RPC_TIMEOUT: '600' })).toEqual({ timeout: 600_000 })
  })

  it.each(['0', '-1', 'abc', '1e3', '601', ' 2'])(
    'refuses %j with a usage error that says what it wants',
    (text) => {
      expect(() => rpcTransportOptions({ VAULT_RPC_TIMEOUT: text })).toThrow(UsageError)
      expect(() => rpcTransportOptions({ VAULT_RPC_TIMEOUT: text })).toThrow(
        /^VAULT_RPC_TIMEOUT must be a number of seconds above 0 and at most 600/,
      )
    },
  )
})
