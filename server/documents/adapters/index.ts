/**
 * The adapter of each registry adapter name.
 */
import type { AdapterName } from '../registry'
import type { Adapter } from './types'
import { readText } from './text'
import { readMarkdown } from './markdown'
import { readCsv } from './csv'
import { readHtml } from './html'
import { readPdf } from './pdf'
import { readDocx } from './docx'
import { readImage } from './image'
import { readXlsx } from './xlsx'
import { readEmail } from './email'
import { readMsg } from './msg'

export { UnreadableDocument, BLOCK_KINDS, type BlockKind, type Extraction, type Segment, type Adapter } from './types'

/** Adapters by name; the registry says which content type uses which. */
export const ADAPTERS: Record<AdapterName, Adapter> = {
  text: readText,
  markdown: readMarkdown,
  csv: readCsv,
  html: readHtml,
  pdf: readPdf,
  docx: readDocx,
  image: readImage,
  xlsx: readXlsx,
  email: readEmail,
  msg: readMsg,
}
