/**
 * Embed secrets: handoffs and session bearers are 32 random bytes in base64url, opaque to every
 * holder. Only their SHA-256 is stored, so a database read never yields a usable credential.
 */
import { createHash, randomBytes } from 'node:crypto'

const SHAPE = /^[A-Za-z0-9_-]{43}$/

/** Mints a fresh opaque secret and its stored hash. */
export function mintSecret(): { plaintext: string; hash: Buffer } {
  const plaintext = randomBytes(32).toString('base64url')
  return { plaintext, hash: hashSecret(plaintext) }
}

/** The stored form of a handoff or session bearer. */
export function hashSecret(plaintext: string): Buffer {
  return createHash('sha256').update(plaintext).digest()
}

/** True when a string has the shape of a minted secret (a cheap check before any lookup). */
export function isSecretShaped(s: unknown): s is string {
  return typeof s === 'string' && SHAPE.test(s)
}
