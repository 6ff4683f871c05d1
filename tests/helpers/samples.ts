/**
 * Real sample files, generated in the test run: PDFs with pdf-lib, a DOCX with docx, a PNG with
 * pngjs, CSV/HTML/Markdown/text as bytes, and broken ones (a corrupt PDF, a PDF whose page tree
 * points at a missing page, a CSV cut inside a quoted field, text with invalid UTF-8).
 */
import { PDFDocument, StandardFonts } from 'pdf-lib'
import { Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx'
import { PNG } from 'pngjs'

const utf8 = (s: string) => new TextEncoder().encode(s)

/** A PDF whose page i holds the lines pages[i], drawn with a standard font. */
export async function pdfSample(pages: string[][], opts: { objectStreams?: boolean } = {}): Promise<Uint8Array> {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  for (const lines of pages) {
    const page = pdf.addPage([595, 842])
    lines.forEach((line, i) => page.drawText(line, { x: 50, y: 780 - i * 16, size: 11, font }))
  }
  return pdf.save({ useObjectStreams: opts.objectStreams ?? true })
}

/** A PDF of `n` pages, each with a heading line and a few lines of numbered prose (for the benchmark). */
export async function longPdfSample(n: number): Promise<Uint8Array> {
  const pages = Array.from({ length: n }, (_, p) => [
    `Section ${p + 1}: applicant statement`,
    ...Array.from({ length: 20 }, (_, l) => `Line ${l + 1} of page ${p + 1}: the applicant declares income, assets and liabilities as listed.`),
  ])
  return pdfSample(pages)
}

/**
 * A 3-page PDF whose page tree names a third page object that does not exist: pdf.js opens it and
 * reads pages 1 and 2, page 3 cannot be read (a partly broken file).
 */
export async function partlyBrokenPdfSample(): Promise<Uint8Array> {
  const bytes = await pdfSample([['Readable page one'], ['Readable page two'], ['Lost page three']], { objectStreams: false })
  const text = Buffer.from(bytes).toString('latin1')
  const kids = /\/Kids \[ (\d+) 0 R (\d+) 0 R (\d+) 0 R \]/.exec(text)
  if (!kids) throw new Error('unexpected pdf-lib output: no page tree')
  // Same length, so the cross-reference offsets stay right: "N 0 R ]" becomes "9N 0 R]".
  const broken = text.replace(kids[0], kids[0].replace(`${kids[3]} 0 R ]`, `9${kids[3]} 0 R]`))
  if (broken.length !== text.length) throw new Error('length changed')
  return new Uint8Array(Buffer.from(broken, 'latin1'))
}

/** Bytes that start like a PDF and are nothing more (a corrupt PDF). */
export function corruptPdfSample(): Uint8Array {
  const junk = new Uint8Array(2048)
  for (let i = 0; i < junk.length; i++) junk[i] = (i * 7919 + 13) % 251
  return new Uint8Array([...utf8('%PDF-1.7\n%\u00e2\u00e3\n1 0 obj\n<< /Type /Catalog'), ...junk])
}

/** A DOCX with a heading, two paragraphs and a two-row table. */
export async function docxSample(): Promise<Uint8Array> {
  const cell = (text: string) => new TableCell({ children: [new Paragraph(text)] })
  const doc = new Document({
    sections: [{
      children: [
        new Paragraph({ text: 'Applicant Summary', heading: HeadingLevel.HEADING_1 }),
        new Paragraph({ children: [new TextRun('The applicant is '), new TextRun({ text: 'Jane Doe', bold: true }), new TextRun('.')] }),
        new Paragraph('Annual income is 85,000 EUR.'),
        new Table({ rows: [new TableRow({ children: [cell('Asset'), cell('Value')] }), new TableRow({ children: [cell('House'), cell('350,000')] })] }),
      ],
    }],
  })
  return new Uint8Array(await Packer.toBuffer(doc))
}

/** A CSV with a header and three records. */
export const csvSample = () => utf8('name,amount,currency\nAlice,100,EUR\n"Bob, Jr.",250,USD\nCarol,75,GBP\n')

/** A CSV whose last record opens a quote that never closes (cut off): the first records still read. */
export const truncatedCsvSample = () => utf8('name,amount\nAlice,100\nBob,250\nCarol,"75\n')

/** An HTML page with a heading, paragraphs, a list, a table and a script that must not be read. */
export const htmlSample = () => utf8(`<!doctype html><html><head><title>Ignored title</title><style>p{color:red}</style></head>
<body><h1>Property Report</h1><p>The property is a <b>detached</b> house.</p><script>var secret = 1</script>
<ul><li>Built 1990</li><li>Roof renewed 2015</li></ul>
<table><tr><th>Room</th><th>Area</th></tr><tr><td>Kitchen</td><td>20 m2</td></tr></table></body></html>`)

/** A Markdown file with a heading, a paragraph with inline markup, a list and a table. */
export const markdownSample = () => utf8(`# Medical Disclosure

The applicant reports **no** chronic conditions and takes [no medication](https://example.test).

## History

- Appendectomy 2004
- Broken arm 2011

| Test | Result |
|------|--------|
| Blood pressure | 120/80 |
`)

/** Plain text: two paragraphs on page 1, one on page 2 (form feed). */
export const textSample = () => utf8('Employment letter.\nThe applicant works here.\n\nSalary is 5,000 per month.\n\fPage two: signed by HR.\n')

/** Text with an invalid UTF-8 sequence in the middle (a partly broken file). */
export const brokenUtf8TextSample = () => new Uint8Array([...utf8('Readable start.\n\nBroken '), 0xff, 0xfe, 0xc3, ...utf8(' middle.\n\nReadable end.\n')])

/** A real 8x8 PNG image. */
export function pngSample(): Uint8Array {
  const png = new PNG({ width: 8, height: 8 })
  for (let i = 0; i < png.data.length; i += 4) png.data.set([i % 256, 80, 160, 255], i)
  return new Uint8Array(PNG.sync.write(png))
}

/** Lower-case hex SHA-256 of bytes. */
export function sha256Hex(bytes: Uint8Array): string {
  return new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
}
