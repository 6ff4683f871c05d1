/**
 * The address classification of the SSRF guard (ipaddr.js ranges): only public unicast passes,
 * IPv4-mapped IPv6 is judged as its IPv4 address, the allow list exempts exact literals only.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { allowListOf, checkTarget, isAllowedAddress } from '../../jobs/ssrf'

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

describe('SSRF guard', () => {
  const refused: [string, string][] = [
    ['127.0.0.1', 'loopback'], ['127.8.9.10', 'loopback'], ['::1', 'loopback'],
    ['10.0.0.1', 'private'], ['172.16.5.4', 'private'], ['192.168.1.1', 'private'],
    ['169.254.169.254', 'linkLocal'], ['fe80::1', 'linkLocal'],
    ['fc00::1', 'uniqueLocal'], ['fdff:ffff::1', 'uniqueLocal'],
    ['0.0.0.0', 'unspecified'], ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'], ['239.255.255.250', 'multicast'], ['ff02::1', 'multicast'],
    ['::ffff:127.0.0.1', 'loopback'], ['::ffff:10.0.0.1', 'private'], ['::ffff:169.254.1.1', 'linkLocal'],
    ['100.64.0.1', 'carrierGradeNat'], ['255.255.255.255', 'broadcast'],
  ]
  for (const [address, range] of refused) {
    test(`${address} (${range}) is refused`, () => {
      expect(isAllowedAddress(address)).toBe(false)
    })
  }

  test('public unicast addresses pass', () => {
    for (const a of ['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e']) expect(isAllowedAddress(a)).toBe(true)
  })

  test('the allow list exempts exactly its literals (IPv4-mapped forms included), nothing else', () => {
    const allow = allowListOf(['127.0.0.2'])
    expect(isAllowedAddress('127.0.0.2', allow)).toBe(true)
    expect(isAllowedAddress('::ffff:127.0.0.2', allow)).toBe(true)
    expect(isAllowedAddress('127.0.0.1', allow)).toBe(false)
    expect(isAllowedAddress('not-an-ip', allow)).toBe(false)
  })

  test('a hostname is resolved and every answer checked; IP literals (bracketed IPv6 too) are not resolved', async () => {
    expect(await checkTarget('localhost', allowListOf([]))).toMatchObject({ ok: false, refused: true, range: 'loopback' })
    expect(await checkTarget('[::ffff:7f00:1]', allowListOf([]))).toMatchObject({ ok: false, refused: true, range: 'loopback' })
    expect(await checkTarget('[fc00::1]', allowListOf([]))).toMatchObject({ ok: false, refused: true, range: 'uniqueLocal' })
    expect(await checkTarget('127.0.0.2', allowListOf(['127.0.0.2']))).toEqual({ ok: true, target: { address: '127.0.0.2', family: 4 } })
    // A mapped answer is dialled as its IPv4 address.
    expect(await checkTarget('[::ffff:127.0.0.2]', allowListOf(['127.0.0.2']))).toEqual({ ok: true, target: { address: '127.0.0.2', family: 4 } })
    expect(await checkTarget('no-such-host.invalid', allowListOf([]))).toEqual({ ok: false, refused: false, error: 'dns_error' })
  })
})
