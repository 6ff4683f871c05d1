/**
 * Lexical retrieval over a case's blocks: a BM25+ index (MiniSearch) of every block's text, queried
 * with a question's words. Both engines use it: the built-in one answers text questions from the
 * best passages, the model-backed one sends the best passages to the model. Deterministic: ties are
 * broken by the block's position in the case.
 */
import MiniSearch from 'minisearch'
import type { CaseBlock } from './facts'

/** One retrieved block: its BM25+ score and which of the query's terms it matched. */
export interface Hit {
  block: CaseBlock
  score: number
  /** The distinct query terms the block matched. */
  matched: string[]
  /** matched / distinct query terms, 0..1. */
  coverage: number
}

/** A searchable index of one case. */
export interface BlockIndex {
  /** The best `limit` blocks for a query (nothing when the query has no searchable term). */
  search(query: string, limit?: number): Hit[]
  /** The searchable terms of a query, after stop words are dropped (stemmed, as the index holds them). */
  terms(query: string): string[]
  /**
   * How specific a (stemmed) term is in this case: BM25's inverse document frequency over the
   * case's blocks. A term no block holds has the highest weight; one every block holds, almost none.
   */
  idf(term: string): number
}

// Function words of questions and documents that carry no evidence on their own.
const STOP_WORDS = new Set(`a about above after again against all am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having he her here hers
him his how i if in into is it its itself just me more most my no nor not now of off on once only or other our ours out
over own same she should so some such than that the their theirs them then there these they this those through to too
under until up very was we were what when where which while who whom why will with would you your yours yes please
provide state indicate give list`.split(/\s+/))

/** Normalises one token for the index and for queries: lower case, no possessive, stop words out. */
export function processTerm(term: string): string | null {
  const t = term.toLowerCase().replace(/['’]s$/, '').replace(/^['’]+|['’]+$/g, '')
  if (t.length < 2 || STOP_WORDS.has(t)) return null
  return t
}

/**
 * A light English stem, the same for index and queries: "claims" -> "claim", "policies" -> "policy",
 * "revenues" -> "revenue" ("business", "gross" and short words are kept as they are).
 */
export function stem(term: string): string {
  if (term.length <= 3 || /\d/.test(term)) return term
  if (term.endsWith('ies') && term.length > 4) return `${term.slice(0, -3)}y`
  if (term.endsWith('s') && !/(ss|us|is)$/.test(term)) return term.slice(0, -1)
  return term
}

/** A token as the index holds it (normalised and stemmed), or null for a stop word. */
export const indexTerm = (term: string): string | null => {
  const t = processTerm(term)
  return t === null ? null : stem(t)
}

/** The words of a text (letters, digits, apostrophes). */
export const tokenize = (text: string) => text.split(/[^\p{L}\p{N}'’]+/u).filter(Boolean)

/** Builds the index of a case's blocks (given in case order). */
export function buildBlockIndex(blocks: readonly CaseBlock[]): BlockIndex {
  const search = new MiniSearch<{ id: number; text: string }>({
    fields: ['text'],
    idField: 'id',
    tokenize,
    processTerm: (t) => indexTerm(t) ?? false,
  })
  search.addAll(blocks.map((b, i) => ({ id: i, text: b.text })))
  // Document frequencies, asked of the index for the terms questions use (no second pass over the text).
  const df = new Map<string, number>()
  const frequency = (term: string) => {
    let d = df.get(term)
    if (d === undefined) {
      d = search.search(term, { prefix: false, fuzzy: false, tokenize: (q) => [q], processTerm: (t) => t }).length
      df.set(term, d)
    }
    return d
  }
  const n = blocks.length
  const terms = (query: string) => [...new Set(tokenize(query).map(indexTerm).filter((t): t is string => t !== null))]
  return {
    terms,
    idf: (term) => { const d = frequency(term); return Math.log(1 + (n - d + 0.5) / (d + 0.5)) },
    search(query, limit = 5) {
      const wanted = terms(query)
      if (wanted.length === 0 || blocks.length === 0) return []
      const results = search.search(wanted.join(' '), {
        combineWith: 'OR',
        prefix: (term) => term.length >= 5,
        tokenize: (q) => q.split(' '),
        processTerm: (t) => t,
      })
      return results
        .map((r) => {
          const matched = [...new Set(r.queryTerms)]
          return { block: blocks[r.id as number]!, score: r.score, matched, coverage: matched.length / wanted.length }
        })
        .sort((a, b) => b.score - a.score || a.block.order - b.block.order)
        .slice(0, limit)
    },
  }
}
