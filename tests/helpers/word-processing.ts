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

/** The words a reader must bring out of the proposal RTF. */
export const PROPOSAL_WORDS = 'Proposal form The proposer is Harbour Holdings Limited, trading as Café Lumière, since 1998. The premium is €5000 per year – payable quarterly. Item Value Sum insured 2500000 Construction Reinforced concrete frame After the table, the declaration follows. Signed declaration'

/** A survey report as an ODT package. */
export function surveyOdt(): Bytes {
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
  // The mimetype entry first and stored, as ODF requires (and type sniffers read).
  return zipSync({
    mimetype: [strToU8('application/vnd.oasis.opendocument.text'), { level: 0 }],
    'content.xml': strToU8(content),
    'META-INF/manifest.xml': strToU8(manifest),
  }) as Bytes
}

/** The words a reader must bring out of the survey ODT (and never the deleted or annotated ones). */
export const SURVEY_WORDS = 'Survey report The building at 12 Harbour Street was inspected on 3 March 2025. It is sound. Roof replaced in 2019 Sprinklers throughout Item Value Building value 1800000 Condition Good no defects Surveyor: A. Jones & Partners'

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
