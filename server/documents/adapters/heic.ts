/**
 * HEIC/HEIF images (every iPhone photo), decoded by libheif compiled to WebAssembly (`heic-decode`
 * over `libheif-js`: its loader, with its `.wasm` handed over as bytes; nothing is fetched at run
 * time, and `bun build --compile` carries the `.wasm` gzip-compressed, 1.4 MB to 0.5 MB, instead
 * of the package's 2 MB single-file build with the WebAssembly inside the JavaScript). libheif is
 * loaded on the first HEIF file a parser process opens. Each top-level image of the file is a page.
 * Sizes are read from the file's headers (`ispe` boxes) before libheif is even loaded, and again
 * from libheif's parse of the container before any pixel is decoded, so an image claiming more
 * pixels than the limit costs nothing.
 */
import { imageSize } from 'image-size'
import { rgbaPng } from './png'
import libheifWasm from '../../../node_modules/libheif-js/libheif-wasm/libheif.wasm' with { type: 'file' }
import { readAsset } from '../../assets'

/** The HEIF brands (ftyp) of still images and image sequences. */
const BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1'])

/** Whether bytes start with an ISO-BMFF `ftyp` box of a HEIF brand. */
export function isHeif(b: Uint8Array): boolean {
  if (b.length < 12 || String.fromCharCode(b[4]!, b[5]!, b[6]!, b[7]!) !== 'ftyp') return false
  return BRANDS.has(String.fromCharCode(b[8]!, b[9]!, b[10]!, b[11]!))
}

/** One image of a HEIF file: its size, and a way to get it as PNG (decoded only when asked). */
export interface HeifImage { width: number; height: number; png(): Promise<Uint8Array> }

/** A HEIF file opened: its images, and `close` to free libheif's memory for them. */
export interface HeifFile { images: HeifImage[]; close(): void }

/** The largest image a HEIF file's headers declare (width x height), or undefined when they declare none. */
export function heifDeclaredPixels(bytes: Uint8Array): number | undefined {
  try {
    const size = imageSize(bytes)
    const all = [size, ...(size.images ?? [])]
    return Math.max(...all.map((s) => (s.width ?? 0) * (s.height ?? 0)))
  } catch {
    return undefined
  }
}

interface DecodedImage { width: number; height: number; decode(): Promise<{ width: number; height: number; data: Uint8ClampedArray }> }
interface HeifDecoder { all(o: { buffer: Uint8Array }): Promise<DecodedImage[] & { dispose(): void }> }

let decoder: Promise<HeifDecoder> | undefined

/** heic-decode over libheif, loaded once per process, on its first HEIF file. */
function heifDecoder(): Promise<HeifDecoder> {
  decoder ??= (async () => {
    // @ts-expect-error heic-decode ships no types for its decoder over a given libheif
    const { default: decoderOver } = await import('heic-decode/lib.js') as { default: (libheif: unknown) => HeifDecoder }
    const { default: libheif } = await import('libheif-js/libheif-wasm/libheif.js') as unknown as { default: (options: { wasmBinary: Uint8Array }) => unknown }
    return decoderOver(libheif({ wasmBinary: await readAsset(libheifWasm) }))
  })()
  return decoder
}

/** Opens a HEIF file with libheif (its container only: no image is decoded yet). Throws when libheif cannot parse it. */
export async function openHeif(bytes: Uint8Array): Promise<HeifFile> {
  const images = await (await heifDecoder()).all({ buffer: bytes })
  return {
    images: images.map((image) => ({
      width: image.width,
      height: image.height,
      async png() {
        const { width, height, data } = await image.decode()
        return rgbaPng(width, height, data)
      },
    })),
    close: () => images.dispose(),
  }
}
