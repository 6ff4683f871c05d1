/**
 * The service key: SVC_SECRET_KEY, or one generated once into $SVC_DATA_DIR/secret.key. It encrypts
 * signing secrets at rest and keys the HMACs of cursors and upload URLs (each through its own
 * derived sub-key, so one use can never be replayed as another).
 */
import { createHmac, randomBytes } from 'node:crypto'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

/** Loads the configured key or the generated one, creating it on first start. */
export function loadSecretKey(configured: Uint8Array | undefined, dataDir: string, warn: (line: string) => void): Uint8Array {
  if (configured) return configured
  const path = join(dataDir, 'secret.key')
  if (existsSync(path)) {
    const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64')
    if (key.length === 32) return new Uint8Array(key)
    throw new Error(`${path} does not hold a 32-byte base64 key`)
  }
  mkdirSync(dataDir, { recursive: true })
  const key = randomBytes(32)
  writeFileSync(path, key.toString('base64') + '\n', { mode: 0o600, flag: 'wx' })
  warn(`SVC_SECRET_KEY is unset: generated a key into ${path}; back it up, or set SVC_SECRET_KEY for every process`)
  return new Uint8Array(key)
}

/** A sub-key of the service key for one purpose ("cursor", "upload-url", ...). */
export function deriveKey(key: Uint8Array, purpose: string): Uint8Array {
  return new Uint8Array(createHmac('sha256', key).update(`svc:${purpose}`).digest())
}
