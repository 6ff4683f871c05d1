/**
 * pdf.js's data files travel with the service: the generated list of static file imports
 * (server/documents/adapters/pdf-data-files.ts) names every predefined CMap and standard font of the
 * installed pdfjs-dist, and the adapter's factory reads them from there (never from the network).
 */
import { expect, setDefaultTimeout, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { pdfDataFiles, pdfDataModule } from '../../scripts/pdf-data'
import { PDF_DATA_FILES } from '../../server/documents/adapters/pdf-data-files'
import { packagedDataOptions } from '../../server/documents/adapters/pdf-data'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

test('the packaged list is current with the installed pdfjs-dist (bun scripts/pdf-data.ts rewrites it)', () => {
  expect(readFileSync('server/documents/adapters/pdf-data-files.ts', 'utf8')).toBe(pdfDataModule())
  const files = pdfDataFiles()
  expect(Object.keys(PDF_DATA_FILES.cMapUrl)).toEqual(files.cMapUrl)
  expect(files.cMapUrl).toContain('GBK-EUC-H.bcmap')
  expect(files.cMapUrl).toContain('Adobe-GB1-UCS2.bcmap')
  expect(Object.keys(PDF_DATA_FILES.standardFontDataUrl)).toEqual(files.standardFontDataUrl)
})

test('the factory hands pdf.js packaged bytes, counts a CMap it lacks, and refuses the rest', async () => {
  const use = { missingCMaps: 0 }
  const { BinaryDataFactory } = packagedDataOptions(use)
  const factory = new BinaryDataFactory({})
  const bytes = await factory.fetch({ kind: 'cMapUrl', filename: 'GBK-EUC-H.bcmap' })
  expect(bytes).toEqual(new Uint8Array(readFileSync('node_modules/pdfjs-dist/cmaps/GBK-EUC-H.bcmap')))
  expect((await factory.fetch({ kind: 'standardFontDataUrl', filename: 'FoxitSerif.pfb' })).length).toBeGreaterThan(1000)
  await expect(factory.fetch({ kind: 'cMapUrl', filename: 'No-Such-H.bcmap' })).rejects.toThrow('no packaged pdf.js cMapUrl data named No-Such-H.bcmap')
  expect(use.missingCMaps).toBe(1)
  await expect(factory.fetch({ kind: 'wasmUrl', filename: 'openjpeg.wasm' })).rejects.toThrow()
  expect(use.missingCMaps).toBe(1)
})
