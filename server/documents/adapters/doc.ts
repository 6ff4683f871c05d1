/**
 * Word 97-2003 documents (DOC), read with `word-extractor` (the OLE compound file and Word's
 * piece table, in JavaScript): the body in reading order, then footnotes, endnotes and text boxes;
 * headers and footers last. word-extractor writes a table cell's end as a tab and a row's end as a
 * tab before the line end, so a run of lines ending in a tab is a table: each row a `table_row`
 * block with its cells named by the table's first row (a cell of several paragraphs joined into
 * one); every other line is a paragraph. The file is bounded by the upload limit and held in memory once; nothing is inflated.
 * Headers and footers repeat from section to section: each text is kept once. A check box form
 * field (`FORMCHECKBOX`) keeps its state outside the text, where word-extractor does not read: the
 * box adds nothing, so a document that has any is degraded, saying how many and why.
 */
import WordExtractor from 'word-extractor'
import { TableRows } from './table-rows'
import { eachTextOnce, paragraphs, UnreadableDocument, type Adapter, type Segment } from './types'

/** Paragraphs and table rows of word-extractor's text of one part. */
export function wordSegments(text: string): Segment[] {
  const out: Segment[] = []
  const table = new TableRows()
  let prose: string[] = [] // lines outside a table, waiting to be cut into paragraphs
  let pending: string[] = [] // lines inside a table before the one that ends a row (a cell's earlier paragraphs)
  let inTable = false
  // A line of word-extractor's text is one Word paragraph.
  const flushProse = () => {
    for (const line of prose) out.push(...paragraphs(line))
    prose = []
  }
  for (const line of text.replace(/\r\n?/g, '\n').split('\n')) {
    if (line.endsWith('\t')) {
      flushProse()
      const row = table.row([...pending, line].join(' ').slice(0, -1).split('\t'))
      if (row) out.push(row)
      pending = []
      inTable = true
      continue
    }
    if (inTable && line.trim() !== '') { pending.push(line); continue }
    if (inTable) { table.end(); inTable = false; prose.push(...pending); pending = [] }
    prose.push(line)
  }
  prose.push(...pending)
  flushProse()
  return out
}

/** The field instruction of a check box form field, as Word stores it in the text (8-bit or UTF-16LE pieces). */
const CHECKBOX_FIELD = [Buffer.from('FORMCHECKBOX', 'latin1'), Buffer.from('FORMCHECKBOX', 'utf16le')]

/** How many check box form fields the file's text holds (a byte search; their state is not read). */
function checkBoxFields(bytes: Uint8Array): number {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let n = 0
  for (const needle of CHECKBOX_FIELD) for (let at = buffer.indexOf(needle); at >= 0; at = buffer.indexOf(needle, at + needle.length)) n++
  return n
}

/** The DOC adapter. */
export const readDoc: Adapter = async (bytes) => {
  if (!(bytes[0] === 0xd0 && bytes[1] === 0xcf && bytes[2] === 0x11 && bytes[3] === 0xe0)) {
    throw new UnreadableDocument('the file is not an OLE compound file (Word 97-2003 documents are)')
  }
  let doc: Awaited<ReturnType<WordExtractor['extract']>>
  try {
    doc = await new WordExtractor().extract(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength))
  } catch (e) {
    throw new UnreadableDocument(/encrypt|password/i.test(String((e as Error)?.message)) ? 'the document is encrypted' : 'the Word document could not be read')
  }
  const segments = [
    ...wordSegments(doc.getBody()),
    ...wordSegments(doc.getFootnotes()),
    ...wordSegments(doc.getEndnotes()),
    ...wordSegments(doc.getTextboxes({ includeHeadersAndFooters: false, includeBody: true })),
    ...eachTextOnce(wordSegments(doc.getHeaders({ includeFooters: true }))),
  ]
  const boxes = checkBoxFields(bytes)
  const notes = boxes > 0
    ? [`${boxes} check box form field${boxes === 1 ? '' : 's'} whose state is not read (Word 97-2003 keeps it outside the text): an answer given by ticking a box may be missing; saved as DOCX it is read`]
    : []
  return { pages: [{ page: 1, segments }], degraded: notes.length > 0, notes }
}
