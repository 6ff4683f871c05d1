/**
 * The address classification of the SSRF guard (ipaddr.js ranges): only public unicast passes,
 * IPv4-mapped IPv6 is judged as its IPv4 address, the allow list exempts exact literals only.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { addressRange, allowListOf, checkTarget, isAllowedAddress } from '../../jobs/ssrf'

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

  // IPv4-compatible IPv6 (::/96) in every spelling, and every deprecated or special IPv6 range, each
  // with a private and (where it embeds one) a public IPv4 address: refused like the mapped ones.
  const specialV6: [string, string][] = [
    ['::127.0.0.1', 'ipv4Compatible'], ['::7f00:1', 'ipv4Compatible'], ['0:0:0:0:0:0:7f00:1', 'ipv4Compatible'],
    ['::a9fe:a9fe', 'ipv4Compatible'], ['::169.254.169.254', 'ipv4Compatible'], ['::10.0.0.1', 'ipv4Compatible'],
    ['::c0a8:101', 'ipv4Compatible'], ['::8.8.8.8', 'ipv4Compatible'], ['::808:808', 'ipv4Compatible'], ['::2', 'ipv4Compatible'],
    ['::ffff:0:7f00:1', 'rfc6145'], ['::ffff:0:808:808', 'rfc6145'],
    ['fec0::1', 'deprecatedSiteLocal'], ['feff:ffff::1', 'deprecatedSiteLocal'],
    ['2002:7f00:1::1', '6to4'], ['2002:a00:1::1', '6to4'], ['2002:a9fe:a9fe::1', '6to4'], ['2002:808:808::1', '6to4'],
    ['2001::1', 'teredo'], ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'teredo'],
    ['64:ff9b::7f00:1', 'rfc6052'], ['64:ff9b::a9fe:a9fe', 'rfc6052'], ['64:ff9b::10.0.0.1', 'rfc6052'], ['64:ff9b::808:808', 'rfc6052'],
    ['64:ff9b:1::a00:1', 'rfc6052'],
    ['2001:10::1', 'deprecatedOrchid'], ['2001:20::1', 'orchid2'], ['2001:30::1', 'droneRemoteIdProtocolEntityTags'],
    ['2001:db8::1', 'reserved'], ['3fff::1', 'reserved'], ['2001:1ff::1', 'reserved'],
    ['2001:2::1', 'benchmarking'], ['2001:3::1', 'amt'], ['2001:4:112::1', 'as112v6'], ['2620:4f:8000::1', 'as112v6'],
    ['100::1', 'discard'], ['5f00::1', 'segmentRouting'],
    // Outside 2000::/3 and in no named range: IETF-reserved, never public unicast.
    ['::1:0:0:1', 'reserved'], ['100:0:0:1::1', 'reserved'], ['4000::1', 'reserved'], ['e000::1', 'reserved'],
  ]
  for (const [address, range] of specialV6) {
    test(`${address} (${range}) is refused, as a literal and in a URL`, async () => {
      expect(isAllowedAddress(address)).toBe(false)
      expect(addressRange(address)).toBe(range)
      // The send-time check sees the URL's hostname, which the URL parser has rewritten (::127.0.0.1 -> ::7f00:1).
      const hostname = new URL(`https://[${address}]:8443/hook`).hostname
      expect(await checkTarget(hostname, allowListOf([]))).toMatchObject({ ok: false, refused: true, range })
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
