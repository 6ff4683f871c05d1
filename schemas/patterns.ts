/**
 * The string rules the service enforces, written once as JSON Schema patterns: the request schemas
 * carry them (so the validator enforces them and the OpenAPI document states them), and the code
 * that checks the same shapes by hand tests against the same expressions. Every pattern is
 * ECMA-262 and means the same with or without the `u` flag (ASCII classes only), and none admits
 * NUL (which no request string may hold).
 */

/** A decimal IPv4 octet without leading zeros (a leading zero would be read as octal by URL parsers). */
const OCTET = '(?:25[0-5]|2[0-4][0-9]|1[0-9]{2}|[1-9]?[0-9])'
const IPV4 = `(?:${OCTET}\\.){3}${OCTET}`
/** Port 1-65535 written without leading zeros. */
const PORT = '(?:[1-9][0-9]{0,3}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5])'

/**
 * A host name of letter-digit-hyphen labels (1-63 each, no dot at either end) whose last label is not
 * a number (a URL parser reads a numeric last label as an IPv4 address). `letters` is the class of
 * letters and digits a label may hold.
 */
const domain = (letters: string) => {
  const label = `[${letters}](?:[${letters}-]{0,61}[${letters}])?`
  return `(?:${label}\\.)*(?![0-9]+(?::|/|\\?|#|$))(?!0[xX][0-9a-fA-F]*(?::|/|\\?|#|$))${label}`
}

/**
 * An exact lower-case https origin: `https://`, a host (lower-case name, a dotted IPv4 address or a
 * bracketed lower-case IPv6 address, which the hand check also requires in its serialized form), an
 * optional port other than the default 443; no path (not even a trailing /), query, fragment,
 * userinfo or wildcard. It is the origin's own serialization (what a browser reports in
 * `MessageEvent.origin`), so an `xn--` label must also be valid Punycode.
 */
export const HTTPS_ORIGIN_PATTERN = `^https://(?:${IPV4}|${domain('a-z0-9')}|\\[[0-9a-f:.]+\\])(?::(?!443$)${PORT})?$`

/**
 * An absolute https URL (the document adds `format: uri`): `https://` in any case (a URL scheme is
 * case-insensitive), a host (a name,
 * a dotted IPv4 address or a bracketed IPv6 address), an optional port, then an optional path, query
 * or fragment; no userinfo.
 */
export const HTTPS_URL_PATTERN = `^[hH][tT][tT][pP][sS]://(?:${IPV4}|${domain('A-Za-z0-9')}|\\[[0-9A-Fa-f:.]+\\])(?::${PORT})?(?:[/?#][^\\s\\u0000]*)?$`

/** A workspace slug: lower-case letters, digits and inner hyphens, 1-63 characters. */
export const SLUG_PATTERN = '^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$'

/** What an email address may not hold: white space, NUL, @, brackets, backslash, comma, semicolon, colon, quote. */
const ADDRESS_CHAR = '[^\\s\\u0000@<>()[\\]\\\\,;:"]'

/** A member's email address (invitations, embed subjects): one @ and a dotted domain, no spaces or brackets. */
export const MEMBER_EMAIL_PATTERN = `^${ADDRESS_CHAR}+@${ADDRESS_CHAR}+\\.${ADDRESS_CHAR}+$`

/** A notification recipient (with `format: email`): a local part of 1-64 characters and a top-level domain of 2 or more. */
export const RECIPIENT_EMAIL_PATTERN = `^${ADDRESS_CHAR}{1,64}@${ADDRESS_CHAR}+\\.[^\\s\\u0000@<>()[\\]\\\\,;:".]{2,}$`

/**
 * Free text that holds a character other than white space (and no NUL): a name, a reason or a note
 * the route refuses when it is blank, as a domain rule (422 without errors[], the field named in
 * `detail`, as the spec has it), so the validator does not apply it; the document states it.
 */
export const NON_BLANK_TEXT_PATTERN = '^[^\\u0000]*[^\\s\\u0000][^\\u0000]*$'

/** A value that holds a character other than white space (the Idempotency-Key header). */
export const NOT_BLANK_PATTERN = '\\S'
