/**
 * pdf.js's data files from the package, never from the network: predefined CMaps (the CJK
 * encodings such as GBK-EUC-H that a PDF may name instead of embedding a font's mapping) and the
 * standard fonts' data (to draw non-embedded standard fonts when a page is rendered for OCR). The
 * files come from `pdfjs-dist` (the same pdf.js version as `unpdf`'s) through static file imports,
 * so `dist/svc` carries them (scripts/pdf-data.ts writes the list).
 */
import { readFile } from 'node:fs/promises'
import { PDF_DATA_FILES } from './pdf-data-files'

type Kind = 'cMapUrl' | 'standardFontDataUrl' | 'wasmUrl'

/** The bytes of one packaged data file, or undefined when the package has none of that name. */
async function packaged(kind: Kind, filename: string): Promise<Uint8Array | undefined> {
  const path = kind === 'wasmUrl' ? undefined : PDF_DATA_FILES[kind][filename]
  return path ? new Uint8Array(await readFile(path)) : undefined
}

/** What one document asked of the data: how many CMaps it named that the package does not hold. */
export interface PdfDataUse { missingCMaps: number }

/**
 * The getDocument options that make pdf.js read its data from the package, counting into `use`
 * the CMaps it asked for and could not have (pdf.js then drops that font's text: the caller says so).
 * pdf.js constructs the factory itself, so each document gets a class of its own.
 */
export function packagedDataOptions(use: PdfDataUse) {
  /** A pdf.js `BinaryDataFactory` over the packaged files; anything else (wasm decoders) is refused as before. */
  class PackagedPdfData {
    constructor(_options: unknown) {}
    async fetch({ kind, filename }: { kind: Kind; filename: string }): Promise<Uint8Array> {
      const bytes = await packaged(kind, filename)
      if (bytes) return bytes
      if (kind === 'cMapUrl') use.missingCMaps++
      throw new Error(`no packaged pdf.js ${kind} data named ${filename}`)
    }
  }
  return {
    BinaryDataFactory: PackagedPdfData,
    cMapUrl: 'packaged:/cmaps/',
    cMapPacked: true,
    standardFontDataUrl: 'packaged:/standard_fonts/',
    useSystemFonts: false,
  }
}
