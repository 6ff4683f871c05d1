/**
 * OCR slots: at most `concurrency` pages are recognised at once across a pool's parser processes.
 * A page asks for a slot with a ticket; waiting pages get free slots round-robin by workspace, then
 * by document (fair-queue.ts), so one workspace's long scan takes turns with another's one page.
 */
import { fairPick } from './fair-queue'

/** Who holds or waits for slots: a parser process, with the document it is reading now. */
export interface SlotHolder {
  /** Tickets it holds. */
  ocrHeld: Set<number>
  /** The document it reads (absent between documents): each grant counts one more OCR page for it. */
  current?: { workspace: string; documentId: string; ocrPages: number }
}

/** The slots of one parser pool. */
export interface OcrSlots<H extends SlotHolder> {
  /** A page of `holder`'s current document waits for a slot; `send` tells the holder its ticket was granted. */
  acquire(holder: H, ticket: number): void
  /** A page is done with its slot: the slot goes to the next waiting page. */
  release(holder: H, ticket: number): void
  /** The holder is gone: its slots are freed and its waiting pages dropped. */
  free(holder: H): void
  /** Whether the holder has a page waiting for a slot (its document's clock stops meanwhile). */
  isWaiting(holder: H): boolean
  /** Slots in use and pages waiting. */
  counts(): { inUse: number; waiting: number }
}

/** Creates the slots; `live` says whether a holder can still be granted one, `send` delivers a grant. */
export function createOcrSlots<H extends SlotHolder>(concurrency: number, live: (holder: H) => boolean, send: (holder: H, ticket: number) => void): OcrSlots<H> {
  let inUse = 0
  let seq = 0
  let grants = 0
  const waiting: { holder: H; ticket: number; workspace: string; documentId: string; seq: number }[] = []
  const lastGrant = { workspace: new Map<string, number>(), document: new Map<string, number>() }

  const grant = (holder: H, ticket: number) => {
    inUse++
    holder.ocrHeld.add(ticket)
    if (holder.current) {
      holder.current.ocrPages++
      lastGrant.workspace.set(holder.current.workspace, ++grants)
      lastGrant.document.set(holder.current.documentId, grants)
    }
    send(holder, ticket)
  }
  const grantWaiting = () => {
    while (inUse < concurrency && waiting.length > 0) {
      const next = fairPick(waiting, lastGrant.workspace, (w) => lastGrant.document.get(w.documentId) ?? 0)
      if (live(next.holder)) grant(next.holder, next.ticket)
    }
  }

  return {
    acquire(holder, ticket) {
      if (!holder.current) return
      waiting.push({ holder, ticket, workspace: holder.current.workspace, documentId: holder.current.documentId, seq: ++seq })
      grantWaiting()
    },
    release(holder, ticket) {
      if (!holder.ocrHeld.delete(ticket)) return
      inUse--
      grantWaiting()
    },
    free(holder) {
      inUse -= holder.ocrHeld.size
      holder.ocrHeld.clear()
      for (let i = waiting.length - 1; i >= 0; i--) if (waiting[i]!.holder === holder) waiting.splice(i, 1)
      grantWaiting()
    },
    isWaiting: (holder) => waiting.some((w) => w.holder === holder),
    counts: () => ({ inUse, waiting: waiting.length }),
  }
}
