/**
 * Typed job kinds. A kind is declared once with `defineJobKind({ name, payload, tenantScoped, ... })`:
 * its payload is a TypeBox schema, so `enqueue` takes exactly `Static<payload>` and the handler reads
 * a typed `job.payload` (and a `string` workspace for tenant-scoped kinds) with no cast. The stored
 * payload is checked again when the job is claimed: one written by an older deploy that no longer
 * fits (a renamed field) makes the job dead with the fields named, instead of silent `undefined` reads.
 */
import type postgres from 'postgres'
import type { Static, TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import type { Sql, Tx } from '../server/db/connect'
import type { AppDeps } from '../server/deps'
import type { ClaimedJob, JobKind } from './types'
import { enqueueJob, enqueueJobs } from './queue'

/** The name, payload schema and workspace rule of a kind: what enqueuing one of its jobs needs. */
export interface JobType<S extends TSchema = TSchema, Scoped extends boolean = boolean> {
  name: string
  payload: S
  /** true: every job of the kind belongs to one workspace (tenant_id set); false: none does. */
  tenantScoped: Scoped
}

/** The workspace of a job of a kind: a tenant id for tenant-scoped kinds, null otherwise. */
export type TenantOf<Scoped extends boolean> = Scoped extends true ? string : null

/** A claimed job of a typed kind: its payload fits the schema; `prepared` is what `prepare` returned. */
export type JobOf<S extends TSchema, Scoped extends boolean, Prepared = undefined> =
  Omit<ClaimedJob, 'payload' | 'tenantId' | 'prepared'> & { payload: Static<S>; tenantId: TenantOf<Scoped>; prepared: Prepared }

/** The reason a task shows when its job could not be read by this version of the service (the details go to the job's last_error). */
export const MISFIT_REASON = 'an internal error: the job could not be read by this version of the service'

/**
 * The declaration of a kind; the fields after `tenantScoped` mean what they mean on JobKind.
 * `giveUpPayload` is the part of the payload onGiveUp reads (default: all of it): a job whose
 * payload does not fit the kind but still fits this part has its task ended by onGiveUp (with
 * MISFIT_REASON), so the task never waits forever on a job that will not run.
 */
export interface JobKindSpec<S extends TSchema, Scoped extends boolean, Prepared, G extends TSchema = S> extends JobType<S, Scoped> {
  giveUpPayload?: G
  maxAttempts?: number
  backoffMs?: (attempts: number) => number
  repeatEveryMs?: number
  finishBatched?: boolean
  arm?: (deps: AppDeps) => Promise<void>
  load?: (sql: Sql, jobs: JobOf<S, Scoped>[], deps: AppDeps) => Promise<void>
  prepare?: (job: JobOf<S, Scoped>, deps: AppDeps) => Promise<Prepared>
  finishInOneStatement?: (sql: Sql, job: JobOf<S, Scoped, Prepared>, deps: AppDeps, done: postgres.PendingQuery<postgres.Row[]>) => Promise<'finished' | 'lost' | 'fallback'>
  finishTogether?: {
    accepts: (job: JobOf<S, Scoped, Prepared>) => boolean
    run: (sql: Sql, jobs: JobOf<S, Scoped, Prepared>[], deps: AppDeps, done: postgres.PendingQuery<postgres.Row[]>) => Promise<ReadonlySet<string>>
  }
  handler: (tx: Tx, job: JobOf<S, Scoped, Prepared>, deps: AppDeps) => Promise<void>
  /** The job is given up; `prepared` is unset when the failed step was `prepare` itself. */
  onGiveUp?: (tx: Tx, job: JobOf<G, Scoped, Prepared | undefined>, deps: AppDeps) => Promise<void>
}

/** A defined kind: a JobKind the runner runs, that also names its type for `enqueue`. */
export type DefinedJobKind<S extends TSchema = TSchema, Scoped extends boolean = boolean> = JobKind & JobType<S, Scoped>

/** Declares a kind's type (name, payload schema, workspace rule) for modules that enqueue its jobs. */
export function jobType<S extends TSchema, Scoped extends boolean>(type: JobType<S, Scoped>): JobType<S, Scoped> {
  return type
}

/**
 * Why a claimed job does not fit its kind's type, or undefined: the payload's failing fields (path
 * and what was expected, the first few) and a tenant-scoped job without a workspace (or the reverse).
 */
export function payloadMisfit(type: JobType, check: ReturnType<typeof TypeCompiler.Compile>, job: ClaimedJob): string | undefined {
  const problems: string[] = []
  if (type.tenantScoped && !job.tenantId) problems.push('tenant_id: the kind is tenant-scoped but the job has no workspace')
  if (!type.tenantScoped && job.tenantId) problems.push('tenant_id: the kind is not tenant-scoped but the job has a workspace')
  if (!check.Check(job.payload)) {
    for (const e of check.Errors(job.payload)) {
      problems.push(`payload${e.path.replaceAll('/', '.') || ''}: ${e.message}`)
      if (problems.length >= 5) break
    }
  }
  return problems.length ? `payload does not fit job kind ${type.name}: ${problems.join('; ')}` : undefined
}

/**
 * Defines a kind from its declaration: the runner checks every claimed job against `payload` and
 * `tenantScoped` before it runs (see JobKind.check), so the typed handler's view of the job holds.
 */
export function defineJobKind<S extends TSchema, Scoped extends boolean, Prepared = undefined, G extends TSchema = S>(spec: JobKindSpec<S, Scoped, Prepared, G>): DefinedJobKind<S, Scoped> {
  const compiled = TypeCompiler.Compile(spec.payload)
  const giveUpPart = spec.giveUpPayload ? TypeCompiler.Compile(spec.giveUpPayload) : compiled
  // The one cast of the job runner's untyped rows to this kind's types, justified by `check`,
  // which the runner applies to every claimed job before prepare, handler or onGiveUp sees it.
  const untyped = spec as unknown as JobKind & JobType<S, Scoped>
  return {
    ...untyped,
    check: (job) => payloadMisfit(spec, compiled, job),
    onMisfit: async (tx, job, deps) => {
      // The workspace rule must hold and the part onGiveUp reads must fit, or nothing can be found safely.
      if (!untyped.onGiveUp || payloadMisfit(spec, giveUpPart, job) !== undefined) return false
      await untyped.onGiveUp(tx, { ...job, giveUpReason: MISFIT_REASON }, deps)
      return true
    },
  }
}

/**
 * Enqueues a job of a typed kind in the caller's transaction (see enqueueJob): the payload is the
 * kind's `Static<payload>` and the workspace follows its tenant-scoped rule, both checked by tsc.
 */
export function enqueue<S extends TSchema, Scoped extends boolean>(
  tx: Tx, type: JobType<S, Scoped>, job: { tenantId: TenantOf<Scoped>; payload: Static<S>; runAt?: Date },
): Promise<string> {
  return enqueueJob(tx, { kind: type.name, tenantId: job.tenantId, payload: job.payload as Record<string, unknown>, ...(job.runAt ? { runAt: job.runAt } : {}) })
}

/**
 * Enqueues many jobs of one typed kind in the caller's transaction with one statement and one
 * notification (see enqueueJobs). Returns their ids in input order.
 */
export function enqueueMany<S extends TSchema, Scoped extends boolean>(
  tx: Tx, type: JobType<S, Scoped>, jobs: { tenantId: TenantOf<Scoped>; payload: Static<S>; runAt?: Date }[],
): Promise<string[]> {
  return enqueueJobs(tx, jobs.map((job) => ({ kind: type.name, tenantId: job.tenantId, payload: job.payload as Record<string, unknown>, ...(job.runAt ? { runAt: job.runAt } : {}) })))
}

/** The runner's table of kinds, keyed by name, from a list of defined kinds (a name twice is a wiring mistake). */
export function kindTable(kinds: DefinedJobKind[]): Record<string, JobKind> {
  const table: Record<string, JobKind> = {}
  for (const k of kinds) {
    if (table[k.name]) throw new Error(`job kind ${k.name} is defined twice`)
    table[k.name] = k
  }
  return table
}
