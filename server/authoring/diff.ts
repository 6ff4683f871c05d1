/**
 * Re-upload diffs: the old and new text of a guideline compared block by block (an LCS over the
 * blocks' whitespace-normalised text, by the `diff` library). Within a run of removed blocks followed
 * by added ones, a removed and an added block are paired as `changed` only when they are about the
 * same thing: their content words (letters only, without articles, modals, comparison words and
 * other function words, plurals folded) have a Dice similarity of at least CHANGED_SIMILARITY (0.5);
 * pairs keep reading order, and the pairing with the most total similarity wins. Anything else is
 * `removed` + `added`. (Blocks without a content word compare all their words and numbers.)
 *
 * Question proposals against a base version: a base question is tied to an old block by the
 * provenance of accepted drafts, or by the key the built-in generator derives from the old block.
 * A tied question is `change`d only to a new draft about the same thing: the same key, the key the
 * generator gives the question's own old sentence, or the same `fact_path`; first among the drafts
 * of its own changed block (there, a lone draft of a lone question also counts when the two
 * sentences pass the same similarity test), then among the drafts of every added or changed block
 * (an obligation moved or rewritten past pairing). Otherwise it is proposed `remove`, and the
 * unrelated new obligation `add` under its own key: an old key never stays on a question about
 * something else. A new draft no base question claims is `add` (or `change` of the base question
 * with its key, if one exists and differs).
 */
import { diffArrays } from 'diff'
import type { Question } from '../evaluation/engine'
import { draftFromBlocks, type Citation, type Draft, type GenBlock } from './obligations'

/** One block-level change. */
export interface BlockChange {
  change: 'added' | 'removed' | 'changed'
  old_block_id?: string
  new_block_id?: string
  old_text?: string
  new_text?: string
}

/** One question proposal. */
export interface Proposal {
  action: 'add' | 'change' | 'remove'
  question_key: string
  question?: Question
  previous?: Question
  citations: Citation[]
  reason: string
}

const norm = (s: string) => s.replace(/\s+/g, ' ').trim()

/** Two blocks (or sentences) at least this similar are one block changed; below it, one removed and one added. */
export const CHANGED_SIMILARITY = 0.5

/** Words that say nothing about what a block is about. */
const FUNCTION_WORDS = new Set([
  'a', 'an', 'the', 'this', 'that', 'these', 'those', 'its', 'their', 'his', 'her', 'our', 'your', 'each', 'every', 'all', 'any', 'some',
  'must', 'shall', 'should', 'may', 'might', 'can', 'could', 'will', 'would', 'required', 'requires', 'require', 'mandatory', 'optional',
  'is', 'are', 'was', 'were', 'be', 'been', 'being', 'has', 'have', 'had', 'do', 'does', 'did', 'not', 'no', 'nor',
  'at', 'least', 'most', 'than', 'more', 'less', 'fewer', 'greater', 'minimum', 'maximum', 'min', 'max', 'exceed', 'exceeds', 'below',
  'above', 'over', 'under', 'between', 'equal', 'exactly', 'up', 'or', 'and', 'but', 'of', 'in', 'on', 'for', 'to', 'with', 'by', 'from',
  'as', 'if', 'when', 'where', 'which', 'who', 'there', 'it', 'also', 'ideally', 'preferably', 'available', 'possible', 'usd', 'eur', 'gbp',
])

const fold = (w: string) => (w.length > 3 && w.endsWith('ies') ? `${w.slice(0, -3)}y` : w.length > 3 && w.endsWith('s') && !w.endsWith('ss') ? w.slice(0, -1) : w)

/** The content words of a text (a set). */
const contentWords = (text: string) => new Set((text.toLowerCase().match(/[a-z]+/g) ?? []).filter((w) => !FUNCTION_WORDS.has(w)).map(fold))

const dice = (a: Set<string>, b: Set<string>) => {
  if (!a.size && !b.size) return 1
  let shared = 0
  for (const w of a) if (b.has(w)) shared++
  return (2 * shared) / (a.size + b.size)
}

/**
 * How much two texts are about the same thing, 0..1: the Dice coefficient of their content words;
 * when neither has one, of all their words and numbers.
 */
export function similarity(a: string, b: string): number {
  return similarityOf(wordsOf(a), wordsOf(b))
}

/** A text's content words and, for the fallback, all its words and numbers. */
const wordsOf = (text: string) => ({ content: contentWords(text), all: new Set(text.toLowerCase().match(/[a-z0-9]+/g) ?? []) })
const similarityOf = (a: ReturnType<typeof wordsOf>, b: ReturnType<typeof wordsOf>) =>
  (a.content.size || b.content.size ? dice(a.content, b.content) : dice(a.all, b.all))

/** Runs larger than this (removed x added) are paired greedily in order instead of by the exact pairing. */
const EXACT_PAIRING_CELLS = 250_000

/**
 * Pairs of (removed index, added index), increasing in both, each at least CHANGED_SIMILARITY
 * similar, with the largest total similarity (a small dynamic programme over the run).
 */
function pairSimilar(removed: readonly string[], added: readonly string[]): [number, number][] {
  const n = removed.length
  const m = added.length
  if (!n || !m) return []
  const [rw, aw] = [removed.map(wordsOf), added.map(wordsOf)]
  const sim = (i: number, j: number) => similarityOf(rw[i]!, aw[j]!)
  if (n * m > EXACT_PAIRING_CELLS) {
    const pairs: [number, number][] = []
    let from = 0
    for (let i = 0; i < n && from < m; i++) {
      for (let j = from; j < Math.min(m, from + 50); j++) {
        if (sim(i, j) >= CHANGED_SIMILARITY) { pairs.push([i, j]); from = j + 1; break }
      }
    }
    return pairs
  }
  // best[i][j]: the best total over removed[i..] and added[j..].
  const best = Array.from({ length: n + 1 }, () => new Float64Array(m + 1))
  const s = Array.from({ length: n }, (_, i) => Float64Array.from({ length: m }, (_, j) => sim(i, j)))
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const pair = s[i]![j]! >= CHANGED_SIMILARITY ? s[i]![j]! + best[i + 1]![j + 1]! : -1
      best[i]![j] = Math.max(pair, best[i + 1]![j]!, best[i]![j + 1]!)
    }
  }
  const pairs: [number, number][] = []
  let i = 0
  let j = 0
  while (i < n && j < m) {
    if (s[i]![j]! >= CHANGED_SIMILARITY && best[i]![j] === s[i]![j]! + best[i + 1]![j + 1]!) { pairs.push([i, j]); i++; j++ }
    else if (best[i]![j] === best[i + 1]![j]) i++
    else j++
  }
  return pairs
}

/** Compares two block lists; returns the changes in reading order and the count of unchanged blocks. */
export function diffBlocks(oldBlocks: readonly GenBlock[], newBlocks: readonly GenBlock[]): { changes: BlockChange[]; unchanged: number } {
  const parts = diffArrays(oldBlocks.map((b) => norm(b.text)), newBlocks.map((b) => norm(b.text)))
  const changes: BlockChange[] = []
  const removedBlock = (b: GenBlock) => changes.push({ change: 'removed', old_block_id: b.id, old_text: b.text })
  const addedBlock = (b: GenBlock) => changes.push({ change: 'added', new_block_id: b.id, new_text: b.text })
  let i = 0
  let j = 0
  let unchanged = 0
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!
    if (!part.added && !part.removed) { i += part.count!; j += part.count!; unchanged += part.count!; continue }
    if (part.removed && parts[p + 1]?.added) {
      const removed = oldBlocks.slice(i, i + part.count!)
      const added = newBlocks.slice(j, j + parts[p + 1]!.count!)
      let r = 0
      let a = 0
      for (const [ri, ai] of pairSimilar(removed.map((b) => norm(b.text)), added.map((b) => norm(b.text)))) {
        for (; r < ri; r++) removedBlock(removed[r]!)
        for (; a < ai; a++) addedBlock(added[a]!)
        changes.push({ change: 'changed', old_block_id: removed[ri]!.id, new_block_id: added[ai]!.id, old_text: removed[ri]!.text, new_text: added[ai]!.text })
        r = ri + 1
        a = ai + 1
      }
      for (; r < removed.length; r++) removedBlock(removed[r]!)
      for (; a < added.length; a++) addedBlock(added[a]!)
      i += removed.length
      j += added.length
      p++
      continue
    }
    if (part.removed) {
      for (const b of oldBlocks.slice(i, i + part.count!)) removedBlock(b)
      i += part.count!
    } else {
      for (const b of newBlocks.slice(j, j + part.count!)) addedBlock(b)
      j += part.count!
    }
  }
  return { changes, unchanged }
}

const questionOf = (d: Draft): Question => {
  const { thresholds: _t, citations: _c, ...q } = d
  return q
}

const same = (a: Question, b: Question) =>
  a.text === b.text && a.criticality === b.criticality && a.answer_type === b.answer_type && a.fact_path === b.fact_path && a.accept === b.accept

/**
 * Proposals against a base version (see the module comment). `provenance` maps a base question key
 * to the guideline blocks it was drafted from (accepted drafts); questions without provenance are
 * tied by generated key.
 */
export function proposeChanges(changes: readonly BlockChange[], oldBlocks: readonly GenBlock[], newBlocks: readonly GenBlock[], base: readonly Question[], provenance: ReadonlyMap<string, { citations: unknown[] }>): Proposal[] {
  const byId = (list: readonly GenBlock[]) => new Map(list.map((b) => [b.id, b]))
  const oldById = byId(oldBlocks)
  const newById = byId(newBlocks)
  const baseByKey = new Map(base.map((q) => [q.key, q]))
  // Every new obligation of an added or changed block, with the change it belongs to.
  const fresh: { draft: Draft; at: number }[] = []
  changes.forEach((c, at) => {
    if (c.new_block_id) for (const draft of draftFromBlocks([newById.get(c.new_block_id)!])) fresh.push({ draft, at })
  })
  const claimed = new Set<number>()
  const handled = new Set<string>()
  const out: { at: number; proposal: Proposal }[] = []

  changes.forEach((c, at) => {
    if (!c.old_block_id) return
    const oldDrafts = draftFromBlocks([oldById.get(c.old_block_id)!])
    const generated = new Set(oldDrafts.map((d) => d.key))
    const cites = (q: Question) => provenance.get(q.key)?.citations as { block_id?: string; quote?: string }[] | undefined
    const tied = base.filter((q) => !handled.has(q.key) && (cites(q) ? cites(q)!.some((x) => x.block_id === c.old_block_id) : generated.has(q.key)))
    const ownFresh = fresh.flatMap((f, k) => (f.at === at && !claimed.has(k) ? [k] : []))
    for (const q of tied) {
      handled.add(q.key)
      // The sentence this question was drafted from: by key, by the quote it cites, or the block's only obligation.
      const origin = oldDrafts.find((d) => d.key === q.key)
        ?? oldDrafts.find((d) => cites(q)?.some((x) => x.block_id === c.old_block_id && x.quote !== undefined && norm(x.quote) === norm(d.citations[0]!.quote)))
        ?? (oldDrafts.length === 1 ? oldDrafts[0] : undefined)
      const about = (d: Draft) => d.key === q.key || (origin !== undefined && d.key === origin.key && d.key !== 'requirement')
        || (q.fact_path !== undefined && d.fact_path === q.fact_path)
      const open = (k: number) => !claimed.has(k) && about(fresh[k]!.draft)
      let match = ownFresh.find(open) ?? fresh.findIndex((_, k) => open(k))
      if (match < 0 && tied.length === 1 && ownFresh.length === 1 && !claimed.has(ownFresh[0]!)) {
        // A changed block's lone obligation reworded: the same one when the sentences are similar enough.
        const d = fresh[ownFresh[0]!]!.draft
        const before = origin?.citations[0]?.quote ?? q.text
        if (d.answer_type === q.answer_type && similarity(before, d.citations[0]!.quote) >= CHANGED_SIMILARITY) match = ownFresh[0]!
      }
      if (match >= 0) {
        claimed.add(match)
        const d = fresh[match]!.draft
        const next = { ...questionOf(d), key: q.key }
        if (!same(next, q)) out.push({ at, proposal: { action: 'change', question_key: q.key, question: next, previous: q, citations: d.citations, reason: fresh[match]!.at === at ? 'the guideline block it came from changed' : 'the guideline restates it in another block' } })
      } else {
        out.push({ at, proposal: { action: 'remove', question_key: q.key, previous: q, citations: [], reason: c.change === 'removed' ? 'the guideline block it came from was removed' : 'the changed guideline block no longer states this obligation' } })
      }
    }
  })

  const taken = new Set([...base.map((q) => q.key), ...out.map((o) => o.proposal.question_key)])
  fresh.forEach(({ draft: d, at }, k) => {
    if (claimed.has(k)) return
    const existing = handled.has(d.key) ? undefined : baseByKey.get(d.key)
    if (existing) {
      handled.add(d.key)
      if (!same(questionOf(d), existing)) out.push({ at, proposal: { action: 'change', question_key: d.key, question: questionOf(d), previous: existing, citations: d.citations, reason: 'a changed guideline block restates this obligation' } })
      return
    }
    // A new obligation; under its own key, never one a base question (about something else) holds.
    let key = d.key.slice(0, 60)
    for (let n = 2; taken.has(key); n++) key = `${d.key.slice(0, 56)}_${n}`
    taken.add(key)
    out.push({ at, proposal: { action: 'add', question_key: key, question: { ...questionOf(d), key }, citations: d.citations, reason: 'a new obligation in the guideline' } })
  })
  return out.sort((a, b) => a.at - b.at).map((o) => o.proposal)
}
