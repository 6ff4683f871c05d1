/**
 * Round-robin between workspaces, then between documents: of the entries waiting, the one whose
 * workspace was served least recently goes first; among a workspace's, the one whose document was
 * served least recently; then the oldest. One workspace's 200-page scan therefore takes turns with
 * another workspace's one-page ID card instead of going before it, and two documents of one
 * workspace share its turns.
 */

/** An entry of a fair queue: its workspace and its arrival order. */
export interface FairEntry { workspace: string; seq: number }

/**
 * Removes and returns the next entry of `waiting` (not empty). `served` holds, per workspace, a
 * counter value of its last turn (larger is more recent); `documentServed` the same for an entry's
 * document (0 when never served).
 */
export function fairPick<T extends FairEntry>(waiting: T[], served: ReadonlyMap<string, number>, documentServed: (entry: T) => number = () => 0): T {
  let best = 0
  let bestKey: [number, number, number] | undefined
  for (let i = 0; i < waiting.length; i++) {
    const e = waiting[i]!
    const key: [number, number, number] = [served.get(e.workspace) ?? 0, documentServed(e), e.seq]
    if (!bestKey || key[0] < bestKey[0] || (key[0] === bestKey[0] && (key[1] < bestKey[1] || (key[1] === bestKey[1] && key[2] < bestKey[2])))) {
      best = i
      bestKey = key
    }
  }
  return waiting.splice(best, 1)[0]!
}
