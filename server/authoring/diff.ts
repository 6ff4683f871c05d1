/**
 * Re-upload diffs: the old and new text of a guideline compared block by block (an LCS over the
 * blocks' whitespace-normalised text, by the `diff` library), adjacent removed and added runs paired
 * as changed blocks; then question proposals against a base version: a base question tied to a
 * changed block (by the provenance of accepted drafts, or by the key the built-in generator derives
 * from the old block) is proposed `change` when the new block's obligation differs, `remove` when the
 * new block states none; a tied question of a removed block is proposed `remove`; an obligation of a
 * new or changed block that no base question covers is proposed `add`.
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

/** Compares two block lists; returns the changes in reading order and the count of unchanged blocks. */
export function diffBlocks(oldBlocks: readonly GenBlock[], newBlocks: readonly GenBlock[]): { changes: BlockChange[]; unchanged: number } {
  const parts = diffArrays(oldBlocks.map((b) => norm(b.text)), newBlocks.map((b) => norm(b.text)))
  const changes: BlockChange[] = []
  let i = 0
  let j = 0
  let unchanged = 0
  for (let p = 0; p < parts.length; p++) {
    const part = parts[p]!
    if (!part.added && !part.removed) { i += part.count!; j += part.count!; unchanged += part.count!; continue }
    if (part.removed && parts[p + 1]?.added) {
      const removed = oldBlocks.slice(i, i + part.count!)
      const added = newBlocks.slice(j, j + parts[p + 1]!.count!)
      const paired = Math.min(removed.length, added.length)
      for (let k = 0; k < paired; k++) changes.push({ change: 'changed', old_block_id: removed[k]!.id, new_block_id: added[k]!.id, old_text: removed[k]!.text, new_text: added[k]!.text })
      for (const b of removed.slice(paired)) changes.push({ change: 'removed', old_block_id: b.id, old_text: b.text })
      for (const b of added.slice(paired)) changes.push({ change: 'added', new_block_id: b.id, new_text: b.text })
      i += removed.length
      j += added.length
      p++
      continue
    }
    if (part.removed) {
      for (const b of oldBlocks.slice(i, i + part.count!)) changes.push({ change: 'removed', old_block_id: b.id, old_text: b.text })
      i += part.count!
    } else {
      for (const b of newBlocks.slice(j, j + part.count!)) changes.push({ change: 'added', new_block_id: b.id, new_text: b.text })
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
 * Proposals against a base version. `provenance` maps a base question key to the guideline blocks it
 * was drafted from (accepted drafts); questions without provenance are tied by generated key.
 */
export function proposeChanges(changes: readonly BlockChange[], oldBlocks: readonly GenBlock[], newBlocks: readonly GenBlock[], base: readonly Question[], provenance: ReadonlyMap<string, { citations: unknown[] }>): Proposal[] {
  const byId = (list: readonly GenBlock[]) => new Map(list.map((b) => [b.id, b]))
  const oldById = byId(oldBlocks)
  const newById = byId(newBlocks)
  const baseByKey = new Map(base.map((q) => [q.key, q]))
  const proposals: Proposal[] = []
  const handled = new Set<string>()
  const tiedTo = (oldBlockId: string): Question[] => {
    const generated = new Set(draftFromBlocks([oldById.get(oldBlockId)!]).map((d) => d.key))
    return base.filter((q) => {
      const cites = provenance.get(q.key)?.citations as { block_id?: string }[] | undefined
      return cites ? cites.some((c) => c.block_id === oldBlockId) : generated.has(q.key)
    })
  }
  for (const c of changes) {
    const fresh = c.new_block_id ? draftFromBlocks([newById.get(c.new_block_id)!]) : []
    const tied = c.old_block_id ? tiedTo(c.old_block_id) : []
    const used = new Set<string>()
    for (const q of tied) {
      if (handled.has(q.key)) continue
      handled.add(q.key)
      const match = fresh.find((d) => d.key === q.key) ?? (tied.length === 1 && fresh.length === 1 ? fresh[0] : undefined)
      if (match) {
        used.add(match.key)
        const next = { ...questionOf(match), key: q.key }
        if (!same(next, q)) proposals.push({ action: 'change', question_key: q.key, question: next, previous: q, citations: match.citations, reason: 'the guideline block it came from changed' })
      } else {
        proposals.push({ action: 'remove', question_key: q.key, previous: q, citations: [], reason: c.change === 'removed' ? 'the guideline block it came from was removed' : 'the changed guideline block no longer states this obligation' })
      }
    }
    for (const d of fresh) {
      if (used.has(d.key) || handled.has(d.key)) continue
      const existing = baseByKey.get(d.key)
      if (existing && same(questionOf(d), existing)) continue
      handled.add(d.key)
      if (existing) proposals.push({ action: 'change', question_key: d.key, question: questionOf(d), previous: existing, citations: d.citations, reason: 'a changed guideline block restates this obligation' })
      else proposals.push({ action: 'add', question_key: d.key, question: questionOf(d), citations: d.citations, reason: 'a new obligation in the guideline' })
    }
  }
  return proposals
}
