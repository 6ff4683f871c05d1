/**
 * HEIC images for tests. No library on the npm registry writes HEIC (libheif-js decodes only), so
 * a HEIC with known text is written by Debian's `heif-enc` (libheif-examples, installed by CI;
 * tests that need it skip with a printed reason where it is absent). A HEIF that only claims a
 * size (for the pixel-limit refusal) is built here, box by box, and needs no encoder.
 */
import type { Canvas } from '@napi-rs/canvas'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Bytes } from './samples'

/** The `heif-enc` command when installed, else null. */
export const heifEncoder = (): string | null => Bun.which('heif-enc')

/** A page encoded as HEIC (HEVC, quality 70) by `heif-enc`; throws when the command is absent. */
export function heicOf(page: Canvas, quality = 70): Bytes {
  const enc = heifEncoder()
  if (!enc) throw new Error('heif-enc is not installed')
  const dir = mkdtempSync(join(tmpdir(), 'heic-'))
  try {
    writeFileSync(join(dir, 'in.png'), page.toBuffer('image/png'))
    const r = Bun.spawnSync([enc, '-q', String(quality), '-o', join(dir, 'out.heic'), join(dir, 'in.png')], { stderr: 'pipe', stdout: 'pipe' })
    if (r.exitCode !== 0) throw new Error(`heif-enc failed: ${r.stderr.toString()}`)
    return new Uint8Array(readFileSync(join(dir, 'out.heic')))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Every `ispe` (image spatial extents) box of a HEIF set to width x height: a real file claiming another size. */
export function claimingSize(heic: Uint8Array, width: number, height: number): Bytes {
  const out = new Uint8Array(heic)
  const v = new DataView(out.buffer)
  for (let i = 4; i + 16 <= out.length; i++) {
    if (out[i] === 0x69 && out[i + 1] === 0x73 && out[i + 2] === 0x70 && out[i + 3] === 0x65) { // 'ispe'
      v.setUint32(i + 8, width)
      v.setUint32(i + 12, height)
    }
  }
  return out
}

const ascii = (s: string) => new TextEncoder().encode(s)
function box(type: string, ...parts: Uint8Array[]): Uint8Array {
  const size = 8 + parts.reduce((n, p) => n + p.length, 0)
  const out = new Uint8Array(size)
  new DataView(out.buffer).setUint32(0, size)
  out.set(ascii(type), 4)
  let at = 8
  for (const p of parts) { out.set(p, at); at += p.length }
  return out
}
const u32 = (...n: number[]) => { const b = new Uint8Array(n.length * 4); n.forEach((x, i) => new DataView(b.buffer).setUint32(i * 4, x)); return b }
const u16 = (...n: number[]) => { const b = new Uint8Array(n.length * 2); n.forEach((x, i) => new DataView(b.buffer).setUint16(i * 2, x)); return b }
const bytes = (...n: number[]) => new Uint8Array(n)

/**
 * A HEIF container whose one HEVC image claims width x height pixels (its `ispe`), with a few
 * bytes of image data that are no HEVC stream: only a header, as a hostile file would be.
 */
export function heifClaiming(width: number, height: number): Bytes {
  const ftyp = box('ftyp', ascii('heic'), u32(0), ascii('mif1'), ascii('heic'))
  const hdlr = box('hdlr', u32(0), u32(0), ascii('pict'), u32(0, 0, 0), bytes(0))
  const pitm = box('pitm', u32(0), u16(1))
  const infe = box('infe', bytes(2, 0, 0, 0), u16(1), u16(0), ascii('hvc1'), bytes(0))
  const iinf = box('iinf', u32(0), u16(1), infe)
  const ispe = box('ispe', u32(0), u32(width, height))
  const ipco = box('ipco', ispe)
  const ipma = box('ipma', u32(0), u32(1), u16(1), bytes(1, 0x81))
  const iprp = box('iprp', ipco, ipma)
  const data = new Uint8Array(64).fill(0x5a)
  // iloc v0: offset_size 4, length_size 4, base_offset_size 0; one item, one extent into mdat.
  const ilocSize = 8 + 4 + 2 + 2 + 2 + 2 + 2 + 4 + 4
  const metaSize = 8 + 4 + hdlr.length + pitm.length + iinf.length + iprp.length + ilocSize
  const dataAt = ftyp.length + metaSize + 8
  const iloc = box('iloc', u32(0), bytes(0x44, 0x00), u16(1), u16(1), u16(0), u16(1), u32(dataAt, data.length))
  const meta = box('meta', u32(0), hdlr, pitm, iinf, iprp, iloc)
  const mdat = box('mdat', data)
  const out = new Uint8Array(ftyp.length + meta.length + mdat.length)
  out.set(ftyp); out.set(meta, ftyp.length); out.set(mdat, ftyp.length + meta.length)
  return out
}
