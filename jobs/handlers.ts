/**
 * The one table of job kinds: kind name -> handler and retry policy. Each issue adds its line(s);
 * the runner looks a claimed job's kind up here.
 */
import type { JobKind } from './types'
import { deliveryJobKind } from './deliver'
import { DELIVERY_JOB_KIND } from '../server/notifications/deliveries'
import { MAINTENANCE_JOB_KIND, maintenanceJobKind } from './maintenance'
import { DOCUMENT_INGESTION, documentIngestionJobKind } from '../server/documents/ingestion'
import { QUESTION_SET_PUBLISH, questionSetPublishJobKind } from '../server/question-sets/publish'
import { EVALUATION_RUN, evaluationRunJobKind } from '../server/evaluation/run'
import { REPORT_GENERATED, reportGeneratedJobKind } from '../server/evaluation/reports'
import { GUIDELINE_INGESTION, guidelineIngestionJobKind } from '../server/authoring/guideline-ingestion'
import { GENERATION_RUN, generationRunJobKind } from '../server/authoring/generation-run'
import { DIFF_RUN, diffRunJobKind } from '../server/authoring/diff-run'
import { STRUCTURE_TASK, structureTaskJobKind } from '../server/authoring/structure'
import { BILLING_RECONCILIATION, billingReconciliationJobKind } from '../server/billing/reconciliation'
import { readUploadedInvoice } from '../server/billing/invoice-upload'
import { REENCRYPT_JOB_KIND, reencryptJobKind } from './reencrypt'

/** Every job kind the runner knows. */
export const JOB_KINDS: Record<string, JobKind> = {
  [DELIVERY_JOB_KIND]: deliveryJobKind(),
  [MAINTENANCE_JOB_KIND]: maintenanceJobKind(),
  [DOCUMENT_INGESTION]: documentIngestionJobKind(),
  [QUESTION_SET_PUBLISH]: questionSetPublishJobKind(),
  [EVALUATION_RUN]: evaluationRunJobKind(),
  [REPORT_GENERATED]: reportGeneratedJobKind(),
  [GUIDELINE_INGESTION]: guidelineIngestionJobKind(),
  [GENERATION_RUN]: generationRunJobKind(),
  [DIFF_RUN]: diffRunJobKind(),
  [STRUCTURE_TASK]: structureTaskJobKind(),
  [BILLING_RECONCILIATION]: billingReconciliationJobKind(readUploadedInvoice),
  [REENCRYPT_JOB_KIND]: reencryptJobKind(),
}
