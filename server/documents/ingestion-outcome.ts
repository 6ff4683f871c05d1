/**
 * The ingestion of an uploaded file, once for every owner of one (case documents, guideline sources
 * of question groups): the check that a job still concerns its row (processing, at the generation it
 * was enqueued for; a reingest supersedes it), the steps of the owner's job kind (parse outside any
 * transaction, re-check and write under the row's lock, give up as `failed`) and the outcome's
 * writes (blocks, status, task end). The owner says which table, paths, task kind and extra writes.
 */
import type { LinkBases } from '../notifications/envelope'
import type { Tx } from '../db/connect'
import type { AppDeps } from '../deps'
import { finishTask } from '../notifications/finish'
import type { Block } from './blocks'
import type { ParseOutcome } from './parsing/extract'
import type { ChildDocument, StatusFields } from './store'
import type { TypedDocument } from '../evaluation/model-typing'
import type { StageClock } from './parsing/stage-times'

/** What the parse found, handed from prepare to the handler (a case document's type, when found before the handler). */
export type IngestionOutcome = { kind: 'skip' } | { kind: 'unsupported'; reason?: string } | (ParseOutcome & { children?: ChildDocument[]; typed?: TypedDocument; clock?: StageClock })

/** A parsed outcome. */
export type ParsedOutcome = Extract<IngestionOutcome, { kind: 'parsed' }>

/** The columns of an ingested row the steps read. */
export interface IngestedRow { tenant_id: string; id: string; status: string; ingestion_generation: number }

/** The statuses an ingestion ends in. */
export type IngestedStatus = 'ready' | 'ready_degraded' | 'failed' | 'unsupported_pending'

/** One owner of ingested files: its rows, their blocks and status, its task kind. */
export interface IngestionOwner<Row extends IngestedRow> {
  /** The task kind of the owner's ingestion (its notifications). */
  taskKind: 'document_ingestion' | 'guideline_ingestion'
  /** The error code of a failed ingestion. */
  failedErrorCode: 'document_ingestion_failed' | 'guideline_ingestion_failed'
  /** The error code of the row (not of its notification) when the file needs a password to be opened. */
  passwordErrorCode: 'document_password_protected' | 'guideline_password_protected'
  /** The row of an id in a workspace (locked for update when `lock`), or null. */
  find(sql: Tx, tenantId: string, id: string, lock?: boolean): Promise<Row | null>
  /** Parses a row's stored bytes (throws for a transient failure; `skip` when superseded meanwhile). */
  parse(row: Row, generation: number, deps: AppDeps): Promise<IngestionOutcome>
  /** The REST path of the row (links.resource of its task). */
  resourcePath(row: Row): string
  /** Replaces the row's blocks in the caller's transaction. */
  replaceBlocks(tx: Tx, tenantId: string, id: string, blocks: readonly Block[]): Promise<void>
  /** Moves the row to an ended status in the caller's transaction. */
  setStatus(tx: Tx, row: Row, status: IngestedStatus, fields: StatusFields): Promise<unknown>
  /** Writes of the owner's own after a parsed outcome and its task's end (metering, attachments). */
  afterParsed?(tx: Tx, row: Row, outcome: ParsedOutcome): Promise<void>
}

/** Whether an ingestion job of `generation` still concerns the row: processing, and not reingested since. */
export function isCurrent<Row extends IngestedRow>(row: Row | null, generation: number): row is Row {
  return row !== null && row.status === 'processing' && row.ingestion_generation === generation
}

/** Writes an outcome: blocks, status and the task's end with its notifications, in the job's transaction. */
export async function applyIngestionOutcome<Row extends IngestedRow>(tx: Tx, links: LinkBases, owner: IngestionOwner<Row>, row: Row, outcome: IngestionOutcome): Promise<void> {
  const base = { links, tenantId: row.tenant_id, taskKind: owner.taskKind, taskId: row.id, resourcePath: owner.resourcePath(row) }
  switch (outcome.kind) {
    case 'skip':
      return
    case 'unsupported':
      await owner.replaceBlocks(tx, row.tenant_id, row.id, [])
      await owner.setStatus(tx, row, 'unsupported_pending', { errorCode: 'unsupported_pending', errorDetail: outcome.reason ?? null, pageCount: null, blockCount: 0, pages: null, processed: true })
      await finishTask(tx, { ...base, result: 'unsupported_pending' })
      return
    case 'unreadable':
      await owner.replaceBlocks(tx, row.tenant_id, row.id, [])
      await owner.setStatus(tx, row, 'failed', { errorCode: outcome.code === 'password_protected' ? owner.passwordErrorCode : owner.failedErrorCode, errorDetail: outcome.reason, pageCount: outcome.pages?.total ?? null, blockCount: 0, pages: outcome.pages ?? null, processed: true })
      await finishTask(tx, { ...base, result: 'failed', reason: outcome.reason })
      return
    case 'parsed':
      outcome.clock?.mark('handler_lock')
      await owner.replaceBlocks(tx, row.tenant_id, row.id, outcome.blocks)
      outcome.clock?.mark('blocks_write')
      await owner.setStatus(tx, row, outcome.degraded ? 'ready_degraded' : 'ready', {
        pageCount: outcome.pageCount,
        blockCount: outcome.blocks.length,
        pages: outcome.pages,
        errorDetail: outcome.degraded ? outcome.notes.join('; ') || 'part of the file could not be read' : null,
        processed: true,
      })
      outcome.clock?.mark('status_write')
      await finishTask(tx, { ...base, result: 'succeeded', degraded: outcome.degraded })
      outcome.clock?.mark('task_finish')
      await owner.afterParsed?.(tx, row, outcome)
      outcome.clock?.mark('after_parsed')
  }
}

/** The job of an ingestion: the row and the generation it was enqueued for. */
export interface IngestionTarget { tenantId: string; id: string; generation: number }

/** The reason a given-up ingestion shows when its last error carried none (content-free). */
export const GIVE_UP_REASON = 'the stored bytes could not be read'

/**
 * The three steps of an owner's ingestion job kind: `prepare` parses outside any transaction (a
 * superseded job parses nothing); `handle` re-checks the row under its lock and writes the outcome
 * (parsing now when prepare did not); `giveUp` ends a still-current row `failed` with `reason`.
 */
export function ingestionSteps<Row extends IngestedRow>(owner: IngestionOwner<Row>) {
  return {
    async prepare(t: IngestionTarget, deps: AppDeps): Promise<IngestionOutcome> {
      const row = await owner.find(deps.sql, t.tenantId, t.id)
      if (!isCurrent(row, t.generation)) return { kind: 'skip' }
      return owner.parse(row, t.generation, deps)
    },
    async handle(tx: Tx, t: IngestionTarget, prepared: IngestionOutcome | undefined, deps: AppDeps): Promise<void> {
      const row = await owner.find(tx, t.tenantId, t.id, true)
      if (!isCurrent(row, t.generation)) return // finished already, or superseded by a reingest
      await applyIngestionOutcome(tx, deps.links, owner, row, !prepared || prepared.kind === 'skip' ? await owner.parse(row, t.generation, deps) : prepared)
    },
    async giveUp(tx: Tx, t: IngestionTarget, reason: string | undefined, links: LinkBases): Promise<void> {
      const row = await owner.find(tx, t.tenantId, t.id, true)
      if (!isCurrent(row, t.generation)) return
      await applyIngestionOutcome(tx, links, owner, row, { kind: 'unreadable', reason: reason ?? GIVE_UP_REASON })
    },
  }
}
