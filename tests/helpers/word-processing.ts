/**
 * Word-processing fixtures: an RTF written as Word writes it (font and colour tables, document
 * info, a `\*` destination, code-page escapes, Unicode escapes with fallbacks, a table, a field),
 * an ODT package assembled part by part with fflate (headings, paragraphs, a list, a table with a
 * two-paragraph cell, spaces, a tracked deletion), the Word 97-2003 files that ship inside
 * word-extractor 0.1.4 (tests/fixtures), and hostile RTF.
 */
import { strToU8, zipSync } from 'fflate'
import { join } from 'node:path'
import type { Bytes } from './samples'

/** A proposal form as RTF (Windows-1252, with Unicode escapes). */
export const PROPOSAL_RTF = String.raw`{\rtf1\ansi\ansicpg1252\deff0\uc1{\fonttbl{\f0\froman Times New Roman;}{\f1\fswiss Arial;}}
{\colortbl;\red0\green0\blue0;\red255\green0\blue0;}{\*\generator Riched20 10.0.19041}{\info{\title Hidden title words}{\author Nobody}}
{\*\themedata 0123456789abcdef}
\pard\sa200\b\f1 Proposal form\b0\par
\pard The proposer is Harbour Holdings Limited, trading as Caf\'e9 Lumi\'e8re, since 1998.\par
The premium is \u8364?5000 per year \endash{} payable quarterly.\par
\trowd\trgaph108\cellx3000\cellx6000\pard\intbl\b Item\b0\cell\b Value\b0\cell\row
\trowd\trgaph108\cellx3000\cellx6000\pard\intbl Sum insured\cell 2500000\cell\row
\trowd\trgaph108\cellx3000\cellx6000\pard\intbl Construction\cell Reinforced concrete\par frame\cell\row
\pard After the table, the declaration follows.\par
{\field{\*\fldinst HYPERLINK "https://example.invalid"}{\fldrslt Signed declaration}}\par
}`

/**
 * A proposal form as RTF the way Word writes one: check box form fields whose state is in the
 * instruction's `\*\formfield` (`\ffres1` ticked, `\ffres0` not, `\ffres25` "as the default"
 * `\ffdefres`), a text form field, a tracked deletion (`\deleted`) before its insertion, and a
 * header on every page and on the first (the same text) and a footer, written before the body.
 */
export const PROPOSAL_FORM_RTF = (() => {
  const box = (result: number, byDefault = 0) => `{\\field\\flddirty{\\*\\fldinst {\\lang1024 FORMCHECKBOX }{\\*\\formfield{\\fftype1\\ffres${result}\\fftypetxt0\\ffhps20{\\*\\ffname Check}\\ffdefres${byDefault}}}}{\\fldrslt }}`
  return String.raw`{\rtf1\ansi\ansicpg1252\deff0{\fonttbl{\f0\fswiss Arial;}}{\*\generator Microsoft Word 16.0;}
{\header \pard\plain\f0 Policy P-12345, Harbour Holdings Limited\par}
{\headerf \pard\plain\f0 Policy P-12345, Harbour Holdings Limited\par}
{\footer \pard\plain\f0 Broker reference B-9\par}
\pard\plain\f0 Sprinklered: ${box(1)} Yes ${box(0)} No\par
Flood zone: ${box(25, 0)} Yes ${box(25, 1)} No\par
Sum insured: {\field{\*\fldinst {FORMTEXT {\*\formfield{\fftype0\ffres25{\*\ffname Sum}}}}}{\fldrslt 2500000}}\par
Building value: {\deleted\revauthdel1 1000000}{\revised\revauth1 1800000}\par
}`
})()

/** The words a reader must bring out of the proposal RTF. */
export const PROPOSAL_WORDS = 'Proposal form The proposer is Harbour Holdings Limited, trading as Café Lumière, since 1998. The premium is €5000 per year – payable quarterly. Item Value Sum insured 2500000 Construction Reinforced concrete frame After the table, the declaration follows. Signed declaration'

/** A survey report as an ODT package; with `margins`, a styles.xml whose master page has a header (its first-page header the same) and a footer. */
export function surveyOdt(opts: { margins?: boolean } = {}): Bytes {
  const content = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0" office:version="1.3">
<office:automatic-styles><style:style xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" style:name="P1" style:family="paragraph"/></office:automatic-styles>
<office:body><office:text>
<text:tracked-changes><text:changed-region text:id="c1"><text:deletion><text:p>Deleted words never read</text:p></text:deletion></text:changed-region></text:tracked-changes>
<text:h text:outline-level="1">Survey report</text:h>
<text:p>The building at 12 Harbour Street was inspected on 3 March 2025.<text:s text:c="2"/>It is sound.</text:p>
<text:list><text:list-item><text:p>Roof replaced in 2019</text:p></text:list-item><text:list-item><text:p>Sprinklers throughout</text:p></text:list-item></text:list>
<table:table table:name="Values"><table:table-column table:number-columns-repeated="2"/>
<table:table-row><table:table-cell office:value-type="string"><text:p>Item</text:p></table:table-cell><table:table-cell><text:p>Value</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell><text:p>Building value</text:p></table:table-cell><table:table-cell office:value-type="float" office:value="1800000"><text:p>1800000</text:p></table:table-cell></table:table-row>
<table:table-row><table:table-cell><text:p>Condition</text:p></table:table-cell><table:table-cell><text:p>Good</text:p><text:p>no defects</text:p></table:table-cell></table:table-row>
</table:table>
<text:p>Surveyor: A. Jones &amp; Partners<office:annotation><text:p>comment never read</text:p></office:annotation></text:p>
</office:text></office:body></office:document-content>`
  const manifest = `<?xml version="1.0" encoding="UTF-8"?>
<manifest:manifest xmlns:manifest="urn:oasis:names:tc:opendocument:xmlns:manifest:1.0" manifest:version="1.3"><manifest:file-entry manifest:full-path="/" manifest:media-type="application/vnd.oasis.opendocument.text"/><manifest:file-entry manifest:full-path="content.xml" manifest:media-type="text/xml"/></manifest:manifest>`
  const styles = `<?xml version="1.0" encoding="UTF-8"?>
<office:document-styles xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" office:version="1.3">
<office:styles><style:style style:name="Header" style:family="paragraph"><style:paragraph-properties/></style:style></office:styles>
<office:master-styles><style:master-page style:name="Standard">
<style:header><text:p text:style-name="Header">Survey S-2025-031, 12 Harbour Street</text:p></style:header>
<style:header-first><text:p text:style-name="Header">Survey S-2025-031, 12 Harbour Street</text:p></style:header-first>
<style:footer><text:p>Page <text:page-number>1</text:page-number></text:p></style:footer>
</style:master-page></office:master-styles></office:document-styles>`
  // The mimetype entry first and stored, as ODF requires (and type sniffers read).
  return zipSync({
    mimetype: [strToU8('application/vnd.oasis.opendocument.text'), { level: 0 }],
    'content.xml': strToU8(content),
    ...(opts.margins ? { 'styles.xml': strToU8(styles) } : {}),
    'META-INF/manifest.xml': strToU8(manifest),
  }) as Bytes
}

/** The words a reader must bring out of the survey ODT (and never the deleted or annotated ones). */
export const SURVEY_WORDS = 'Survey report The building at 12 Harbour Street was inspected on 3 March 2025. It is sound. Roof replaced in 2019 Sprinklers throughout Item Value Building value 1800000 Condition Good no defects Surveyor: A. Jones & Partners'

const W_MAIN = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main'
const W_RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships'
const wRun = (text: string) => `<w:r><w:t xml:space="preserve">${text}</w:t></w:r>`
/** A legacy form check box (FORMCHECKBOX), as Word's "check box form field" writes it: its state in the field data, no text. */
const legacyCheckBox = (checked: boolean) => `<w:r><w:fldChar w:fldCharType="begin"><w:ffData><w:name w:val="Check"/><w:enabled/><w:checkBox><w:sizeAuto/><w:default w:val="0"/>${checked ? '<w:checked/>' : ''}</w:checkBox></w:ffData></w:fldChar></w:r>`
  + '<w:r><w:instrText xml:space="preserve"> FORMCHECKBOX </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r>'
/** A check box content control (Word 2010 on): its state in the control's properties, its glyph as text. */
const controlCheckBox = (checked: boolean) => `<w:sdt><w:sdtPr><w14:checkbox><w14:checked w14:val="${checked ? 1 : 0}"/></w14:checkbox></w:sdtPr><w:sdtContent>${wRun(checked ? '\u2612' : '\u2610')}</w:sdtContent></w:sdt>`
const wPart = (root: 'document' | 'hdr' | 'ftr', content: string) =>
  `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<w:${root} xmlns:w="${W_MAIN}" xmlns:r="${W_RELS}" xmlns:w14="http://schemas.microsoft.com/office/word/2010/wordml">${content}</w:${root}>`

/**
 * A proposal form as Word writes it, assembled part by part: answers given by legacy form check boxes
 * and by check box content controls, a text form field, a tracked change (a deleted and an inserted
 * figure), a table; the policy number in the page header (the default and the first-page header
 * alike) and the broker's reference in the footer.
 */
export function proposalDocx(): Bytes {
  const body = [
    `<w:p>${wRun('Sprinklered: ')}${legacyCheckBox(true)}${wRun(' Yes ')}${legacyCheckBox(false)}${wRun(' No')}</w:p>`,
    `<w:p>${wRun('Flood zone: ')}${controlCheckBox(false)}${wRun(' Yes ')}${controlCheckBox(true)}${wRun(' No')}</w:p>`,
    `<w:p>${wRun('Sum insured: ')}<w:r><w:fldChar w:fldCharType="begin"><w:ffData><w:name w:val="Sum"/><w:textInput/></w:ffData></w:fldChar></w:r><w:r><w:instrText xml:space="preserve"> FORMTEXT </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r>${wRun('2500000')}<w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`,
    `<w:p>${wRun('Building value: ')}<w:del w:id="1" w:author="UW" w:date="2025-01-01T00:00:00Z"><w:r><w:delText>1000000</w:delText></w:r></w:del><w:ins w:id="2" w:author="UW" w:date="2025-01-01T00:00:00Z">${wRun('1800000')}</w:ins></w:p>`,
    `<w:tbl><w:tr><w:tc><w:p>${wRun('Item')}</w:p></w:tc><w:tc><w:p>${wRun('Value')}</w:p></w:tc></w:tr><w:tr><w:tc><w:p>${wRun('Construction')}</w:p></w:tc><w:tc><w:p>${wRun('Reinforced concrete')}</w:p></w:tc></w:tr></w:tbl>`,
    '<w:sectPr><w:headerReference w:type="default" r:id="rIdH1"/><w:headerReference w:type="first" r:id="rIdH2"/><w:footerReference w:type="default" r:id="rIdF1"/><w:titlePg/></w:sectPr>',
  ].join('')
  const header = wPart('hdr', `<w:p>${wRun('Policy P-12345, Harbour Holdings Limited')}</w:p>`)
  const type = (part: string, kind: string) => `<Override PartName="/word/${part}" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.${kind}+xml"/>`
  return zipSync({
    '[Content_Types].xml': strToU8('<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>'
      + `${type('document.xml', 'document.main')}${type('header1.xml', 'header')}${type('header2.xml', 'header')}${type('footer1.xml', 'footer')}</Types>`),
    '_rels/.rels': strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${W_RELS}/officeDocument" Target="word/document.xml"/></Relationships>`),
    'word/_rels/document.xml.rels': strToU8(`<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">`
      + `<Relationship Id="rIdH1" Type="${W_RELS}/header" Target="header1.xml"/><Relationship Id="rIdH2" Type="${W_RELS}/header" Target="header2.xml"/><Relationship Id="rIdF1" Type="${W_RELS}/footer" Target="footer1.xml"/></Relationships>`),
    'word/document.xml': strToU8(wPart('document', `<w:body>${body}</w:body>`)),
    'word/header1.xml': strToU8(header),
    'word/header2.xml': strToU8(header),
    'word/footer1.xml': strToU8(wPart('ftr', `<w:p>${wRun('Broker reference B-9')}</w:p>`)),
  }) as Bytes
}

/** A Word 97-2003 fixture shipped inside word-extractor 0.1.4 (see tests/fixtures/word-extractor-0.1.4/README.md). */
export async function wordFixture(name: 'test03.doc' | 'test04.doc' | 'test06.doc'): Promise<Bytes> {
  return new Uint8Array(await Bun.file(join(import.meta.dir, '..', 'fixtures', 'word-extractor-0.1.4', name)).arrayBuffer())
}

/** The words each Word fixture must give (as word-extractor's own tests and the files' text show). */
export const WORD_FIXTURE_WORDS: Record<string, string> = {
  'test03.doc': 'Each license name is hyperlinked to its location. License GPL v3.0 LGPL v3.0 BSD MIT (X11) Apache v2.0 Can You Release Commercial Works? Can You Create Derivative Works? Attribution? So What?',
  'test04.doc': 'This is a fairly simple word document, over two pages, with headers and footers. Firstly, some currency symbols: GBP - £ EUR - € Molière L\'Avare ou l\'École du mensonge This is page two. Les Précieuses ridicules. The end. This is a simple header, with a € euro symbol in it.',
  'test06.doc': 'Nom Document1 Analyste ROB (432) But Insert subject here. Paquetage Constructeur newFwClient Logique Insert logic description here..',
}

/** An RTF nested `depth` groups deep around a few words. */
export const deepRtf = (depth: number): Bytes => strToU8(`{\\rtf1\\ansi ${'{'.repeat(depth)}deep words inside${'}'.repeat(depth)}\\par After the nesting.\\par}`) as Bytes
