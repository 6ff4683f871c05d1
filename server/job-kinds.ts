/**
 * The job kinds this service runs: part of the wiring, like wiring.ts. Each domain defines its own
 * kind (defineJobKind: name, payload schema, handler); the runner (jobs/runner.ts) knows none of
 * them and runs the table it is given (main.ts passes this one; tests may pass a variant).
 */
import type { JobKind } from '../jobs/types'
import { kindTable } from '../jobs/define'
import { deliveryJobKind } from '../jobs/deliver'
import { maintenanceJobKind } from './notifications/maintenance'
import { reencryptJobKind } from './notifications/reencrypt'
import { documentIngestionJobKind } from './documents/ingestion'
import { questionSetPublishJobKind } from './question-sets/publish'
import { raiseSupersessions } from './authoring/supersessions'
import { evaluationRunJobKind } from './evaluation/run'
import { reportGeneratedJobKind } from './evaluation/reports'
import { guidelineIngestionJobKind } from './authoring/guideline-ingestion'
import { generationRunJobKind } from './authoring/generation-run'
import { diffRunJobKind } from './authoring/diff-run'
import { structureTaskJobKind } from './authoring/structure'
import { billingReconciliationJobKind } from './billing/reconciliation'
import { readUploadedInvoice } from './billing/invoice-upload'

/** Every job kind the service runs, by name. */
export const JOB_KINDS: Record<string, JobKind> = kindTable([
  deliveryJobKind(),
  maintenanceJobKind(),
  documentIngestionJobKind(),
  questionSetPublishJobKind(raiseSupersessions),
  evaluationRunJobKind(),
  reportGeneratedJobKind(),
  guidelineIngestionJobKind(),
  generationRunJobKind(),
  diffRunJobKind(),
  structureTaskJobKind(),
  billingReconciliationJobKind(readUploadedInvoice),
  reencryptJobKind(),
])
