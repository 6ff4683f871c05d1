/**
 * Markdown, read with `marked`'s lexer: headings, paragraphs, list items, code blocks and
 * blockquotes become text blocks, table rows become `table_row` blocks (cells joined by " | "),
 * inline markup is reduced to its text.
 */
import { marked, type Token, type Tokens } from 'marked'
import { convert } from 'html-to-text'
import { decodeText, replacedNote } from './encoding'
import { requireReadable, tidy, type Adapter, type Segment } from './types'

/** The plain text of inline tokens (emphasis, links, code spans reduced to their words). */
function inlineText(tokens: Token[] | undefined, fallback: string): string {
  if (!tokens) return fallback
  return tokens.map((t) => {
    switch (t.type) {
      case 'br': return '\n'
      case 'image': return (t as Tokens.Image).text
      case 'html': return convert((t as Tokens.HTML).raw, { wordwrap: false })
      case 'escape': return (t as Tokens.Escape).text
      default: {
        const withChildren = t as { tokens?: Token[]; text?: string; raw: string }
        return withChildren.tokens ? inlineText(withChildren.tokens, withChildren.text ?? '') : withChildren.text ?? withChildren.raw
      }
    }
  }).join('')
}

/** Appends the segments of block-level tokens, in order. */
function collect(tokens: Token[], out: Segment[]): void {
  const push = (kind: Segment['kind'], text: string) => {
    const clean = tidy(text)
    if (clean !== '') out.push({ kind, text: clean })
  }
  for (const t of tokens) {
    switch (t.type) {
      case 'heading': push('heading', inlineText((t as Tokens.Heading).tokens, (t as Tokens.Heading).text)); break
      case 'paragraph': push('paragraph', inlineText((t as Tokens.Paragraph).tokens, (t as Tokens.Paragraph).text)); break
      case 'text': push('paragraph', inlineText((t as Tokens.Text).tokens, (t as Tokens.Text).text)); break
      case 'code': push('paragraph', (t as Tokens.Code).text); break
      case 'blockquote': collect((t as Tokens.Blockquote).tokens, out); break
      case 'list':
        for (const item of (t as Tokens.List).items) {
          // A list item holds block tokens of its own; a tight item is one text token.
          const inner: Segment[] = []
          collect(item.tokens, inner)
          const [first, ...rest] = inner
          if (first) out.push({ kind: 'paragraph', text: first.text }, ...rest)
        }
        break
      case 'table': {
        const table = t as Tokens.Table
        push('table_row', table.header.map((c) => inlineText(c.tokens, c.text).trim()).join(' | '))
        for (const row of table.rows) push('table_row', row.map((c) => inlineText(c.tokens, c.text).trim()).join(' | '))
        break
      }
      case 'html': push('paragraph', convert((t as Tokens.HTML).raw, { wordwrap: false })); break
      default: break // space, hr, def: no text
    }
  }
}

/** The Markdown adapter. */
export const readMarkdown: Adapter = async (bytes, options) => {
  const { text, lossy, encoding } = decodeText(bytes, options?.charset)
  requireReadable(text, 'Markdown file')
  const segments: Segment[] = []
  collect(marked.lexer(text.replace(/\r\n?/g, '\n'), { gfm: true }), segments)
  return { pages: [{ page: 1, segments }], degraded: lossy, notes: lossy ? [replacedNote(encoding)] : [], encoding }
}
