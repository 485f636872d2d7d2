import { expect, it } from 'vitest'
import { clientAddress } from '../../../src/mcp/http/clientAddress.js'

const headers = (entries: Record<string, string> = {}) => new Headers(entries)

it('is the connection’s address unless a proxy header is trusted (none by default): a client cannot name itself', () => {
  const forged = headers({ 'x-forwarded-for': '198.51.100.9' })
  expect(clientAddress(forged, undefined, '203.0.113.7')).toBe('203.0.113.7')
  expect(clientAddress(headers(), undefined, undefined)).toBe('unknown')
})

it('with a trusted header, its last entry: the one the nearest proxy appended, not what the client wrote before it', () => {
  const forwarded = headers({ 'x-forwarded-for': '198.51.100.9, 203.0.113.7' })
  expect(clientAddress(forwarded, 'x-forwarded-for', '10.0.0.2')).toBe('203.0.113.7')
  const appended = new Headers()
  appended.append('x-forwarded-for', '198.51.100.9')
  appended.append('x-forwarded-for', '2001:db8::7')
  expect(clientAddress(appended, 'x-forwarded-for', '10.0.0.2')).toBe('2001:db8::7')
  expect(
    clientAddress(headers({ 'cf-connecting-ip': ' 192.0.2.1 ' }), 'cf-connecting-ip', '10.0.0.2'),
  ).toBe('192.0.2.1')
})

it('without the trusted header, or with no address in it, the connection’s address (the proxy’s, so all such clients share one bucket)', () => {
  expect(clientAddress(headers(), 'x-forwarded-for', '10.0.0.2')).toBe('10.0.0.2')
  for (const value of ['', 'a b', '<script>', 'x'.repeat(65), '198.51.100.9,']) {
    expect(
      clientAddress(headers({ 'x-forwarded-for': value }), 'x-forwarded-for', '10.0.0.2'),
      value,
    ).toBe('10.0.0.2')
  }
})
