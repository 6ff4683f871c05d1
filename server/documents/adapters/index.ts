/**
 * The adapter of each registry adapter name. Each is loaded when first used: a parser process
 * starts with none of the parsing libraries and loads only those its documents need (a cold start
 * of every library took ~300 ms before the first document).
 */
import type { AdapterName } from '../registry'
import type { Adapter } from './types'

export { UnreadableDocument, BLOCK_KINDS, type BlockKind, type Extraction, type Segment, type Adapter } from './types'

const lazy = (load: () => Promise<Adapter>): Adapter => {
  let adapter: Promise<Adapter> | undefined
  return async (bytes, options) => (await (adapter ??= load()))(bytes, options)
}

/** Adapters by name; the registry says which content type uses which. */
export const ADAPTERS: Record<AdapterName, Adapter> = {
  text: lazy(async () => (await import('./text')).readText),
  markdown: lazy(async () => (await import('./markdown')).readMarkdown),
  csv: lazy(async () => (await import('./csv')).readCsv),
  html: lazy(async () => (await import('./html')).readHtml),
  pdf: lazy(async () => (await import('./pdf')).readPdf),
  docx: lazy(async () => (await import('./docx')).readDocx),
  image: lazy(async () => (await import('./image')).readImage),
  spreadsheet: lazy(async () => (await import('./spreadsheet')).readSpreadsheet),
  email: lazy(async () => (await import('./email')).readEmail),
  msg: lazy(async () => (await import('./msg')).readMsg),
  doc: lazy(async () => (await import('./doc')).readDoc),
  rtf: lazy(async () => (await import('./rtf')).readRtf),
  odt: lazy(async () => (await import('./odt')).readOdt),
  zip: lazy(async () => (await import('./zip')).readZip),
}
