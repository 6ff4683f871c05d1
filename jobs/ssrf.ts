/**
 * The SSRF guard of webhook sends. A target's host is resolved on every send; if any address it
 * resolves to is not ordinary public unicast (private, loopback, link-local, unique-local,
 * unspecified, multicast, broadcast, carrier-grade NAT, reserved, translation and tunnel ranges,
 * for IPv4, IPv6 and IPv4-mapped IPv6 alike) the send is refused. The caller then connects to the
 * address that was checked, so a DNS answer that changes between check and connect cannot reach a
 * private address. Ranges come from ipaddr.js, not hand-written masks; the one thing ipaddr.js calls
 * `unicast` that is not is IPv6 outside the global unicast block 2000::/3 (IANA: everything else is
 * reserved, special or local), which includes the deprecated IPv4-compatible ::/96 (`::7f00:1`, the
 * form `[::127.0.0.1]` takes in a URL). Inside 2000::/3 every special range ipaddr.js names (6to4,
 * Teredo, NAT64 64:ff9b::/96 and /48, ORCHID, documentation, benchmarking, AMT, AS112, 3fff::/20)
 * is refused like any other non-unicast range, whatever IPv4 address it embeds; so are
 * site-local fec0::/10, discard 100::/64 and the IPv4-translated ::ffff:0:0:0/96.
 */
import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'

/** An address a host resolved to. */
export interface CheckedAddress { address: string; family: 4 | 6 }

/** The outcome of checking a host: a public address to connect to, a refusal, or a DNS failure. */
export type TargetCheck =
  | { ok: true; target: CheckedAddress }
  | { ok: false; refused: true; address: string; range: string }
  | { ok: false; refused: false; error: 'dns_error' }

/** IANA's global unicast block: IPv6 outside it is never an ordinary public address. */
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3') as [ipaddr.IPv6, number]
/** Deprecated IPv4-compatible IPv6 (RFC 4291 2.5.5.1). */
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96') as [ipaddr.IPv6, number]

/**
 * The WHATWG (URL) spelling of an IPv6 literal, the form URL hostnames and DNS answers take: ipaddr.js
 * reads `::127.0.0.1` as IPv4-mapped, a URL reads it as the IPv4-compatible `::7f00:1`. Zone ids and
 * anything URL parsing refuses are left as they are.
 */
function canonicalText(address: string): string {
  if (!address.includes(':')) return address
  try {
    return bareHost(new URL(`http://[${address}]/`).hostname)
  } catch {
    return address
  }
}

/**
 * The range name of an address: ipaddr.js's, IPv4-mapped IPv6 classified as its IPv4 address, and
 * IPv6 that ipaddr.js calls unicast but that lies outside 2000::/3 as `ipv4Compatible` (::/96) or
 * `reserved` (the rest), so that only ordinary public unicast is ever `unicast`.
 */
export function addressRange(address: string): string {
  const parsed = ipaddr.process(canonicalText(address))
  const range = parsed.range()
  if (parsed.kind() === 'ipv6' && range === 'unicast') {
    const v6 = parsed as ipaddr.IPv6
    if (v6.match(IPV4_COMPATIBLE)) return 'ipv4Compatible'
    if (!v6.match(GLOBAL_UNICAST)) return 'reserved'
  }
  return range
}

/** The canonical text of an IP literal (IPv4-mapped IPv6 as IPv4), for comparing allow-list entries. */
export function canonicalAddress(address: string): string {
  return ipaddr.process(canonicalText(address)).toNormalizedString()
}

/** Whether a webhook may connect to this address: public unicast, or exempt by the allow list. */
export function isAllowedAddress(address: string, allow: ReadonlySet<string> = new Set()): boolean {
  if (!ipaddr.isValid(address)) return false
  if (allow.has(canonicalAddress(address))) return true
  return addressRange(address) === 'unicast'
}

/** The allow list of SVC_WEBHOOK_UNSAFE_ALLOW_ADDRESSES in canonical form. */
export function allowListOf(addresses: readonly string[]): ReadonlySet<string> {
  // The configuration's list is one array for the process: canonicalised once, not per send.
  let set = allowLists.get(addresses)
  if (!set) allowLists.set(addresses, (set = new Set(addresses.filter((a) => ipaddr.isValid(a)).map(canonicalAddress))))
  return set
}
const allowLists = new WeakMap<readonly string[], ReadonlySet<string>>()

/** Decisions on IP-literal hosts, per allow list: a literal's answer never changes (no DNS is involved). */
const literalChecks = new WeakMap<ReadonlySet<string>, Map<string, TargetCheck>>()
const LITERAL_CHECKS_MAX = 4096

/** A URL hostname without the brackets of an IPv6 literal. */
export function bareHost(hostname: string): string {
  return hostname.startsWith('[') && hostname.endsWith(']') ? hostname.slice(1, -1) : hostname
}

/**
 * Resolves `hostname` (DNS on every call; an IP literal is taken as is) and checks every answer.
 * One refused answer refuses the target, so round-robin answers cannot smuggle a private address.
 */
export async function checkTarget(hostname: string, allow: ReadonlySet<string>): Promise<TargetCheck> {
  const host = bareHost(hostname)
  let memo = literalChecks.get(allow)
  const known = memo?.get(host)
  if (known) return known
  let answers: CheckedAddress[]
  const literal = ipaddr.isValid(host)
  if (literal) {
    answers = [{ address: host, family: ipaddr.parse(host).kind() === 'ipv6' ? 6 : 4 }]
  } else {
    try {
      const found = await lookup(host, { all: true, verbatim: true })
      answers = found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }))
    } catch {
      return { ok: false, refused: false, error: 'dns_error' }
    }
    if (answers.length === 0) return { ok: false, refused: false, error: 'dns_error' }
  }
  const decided = decide(answers, allow)
  if (literal) {
    if (!memo) literalChecks.set(allow, (memo = new Map()))
    if (memo.size >= LITERAL_CHECKS_MAX) memo.clear()
    memo.set(host, deepFreeze(decided))
  }
  return decided
}

/** A remembered decision is shared by every later send: nothing may change it. */
function deepFreeze(check: TargetCheck): TargetCheck {
  if (check.ok) Object.freeze(check.target)
  return Object.freeze(check)
}

/** Refuses the target when any answer is refused; otherwise the first answer is the address to connect to. */
function decide(answers: CheckedAddress[], allow: ReadonlySet<string>): TargetCheck {
  for (const a of answers) {
    if (!isAllowedAddress(a.address, allow)) {
      return { ok: false, refused: true, address: a.address, range: ipaddr.isValid(a.address) ? addressRange(a.address) : 'invalid' }
    }
  }
  // Connect to the checked address itself; an IPv4-mapped IPv6 answer is dialled as its IPv4 address.
  const chosen = ipaddr.process(canonicalText(answers[0]!.address))
  return { ok: true, target: { address: chosen.toString(), family: chosen.kind() === 'ipv6' ? 6 : 4 } }
}
