/**
 * The migration list. Each file is imported as text so `bun build --compile` embeds it; a test
 * checks that every sql/NNN_*.sql file is listed here.
 */
import m001 from './001_foundation.sql' with { type: 'text' }
import m002 from './002_workspaces.sql' with { type: 'text' }
import m003 from './003_jobs_notifications.sql' with { type: 'text' }
import m004 from './004_documents_events.sql' with { type: 'text' }
import m005 from './005_credential_changes.sql' with { type: 'text' }
import m006 from './006_question_sets_evaluations.sql' with { type: 'text' }
import m007 from './007_embed.sql' with { type: 'text' }
import m008 from './008_authoring.sql' with { type: 'text' }
import m009 from './009_idempotency_text.sql' with { type: 'text' }
import m010 from './010_page_outcomes.sql' with { type: 'text' }
import m011 from './011_block_cells.sql' with { type: 'text' }
import m012 from './012_document_parents.sql' with { type: 'text' }
import m013 from './013_subscription_tasks.sql' with { type: 'text' }
import m014 from './014_break_glass_access.sql' with { type: 'text' }
import m015 from './015_default_vertical.sql' with { type: 'text' }
import m016 from './016_billing.sql' with { type: 'text' }
import m017 from './017_request_trace.sql' with { type: 'text' }
import m019 from './019_password_protected.sql' with { type: 'text' }
import m023 from './023_document_findings.sql' with { type: 'text' }
import m025 from './025_write_spread.sql' with { type: 'text' }
import m026 from './026_dev_listeners.sql' with { type: 'text' }
import m027 from './027_document_type_source.sql' with { type: 'text' }
import m028 from './028_tenant_row_unlocked.sql' with { type: 'text' }
import m029 from './029_block_chunks.sql' with { type: 'text' }
import m030 from './030_delivery_finish_hot.sql' with { type: 'text' }
import m031 from './031_job_claim_hot.sql' with { type: 'text' }
import m032 from './032_delivery_subscription_index.sql' with { type: 'text' }
import m033 from './033_held_jobs_delete.sql' with { type: 'text' }
import m034 from './034_tenant_indexes_keyed_lookups.sql' with { type: 'text' }

/** One migration: its number, its name and its SQL. */
export interface Migration { version: number; name: string; sql: string }

/** Every migration of this build, in order. */
export const MIGRATIONS: Migration[] = [
  { version: 1, name: '001_foundation', sql: m001 },
  { version: 2, name: '002_workspaces', sql: m002 },
  { version: 3, name: '003_jobs_notifications', sql: m003 },
  { version: 4, name: '004_documents_events', sql: m004 },
  { version: 5, name: '005_credential_changes', sql: m005 },
  { version: 6, name: '006_question_sets_evaluations', sql: m006 },
  { version: 7, name: '007_embed', sql: m007 },
  { version: 8, name: '008_authoring', sql: m008 },
  { version: 9, name: '009_idempotency_text', sql: m009 },
  { version: 10, name: '010_page_outcomes', sql: m010 },
  { version: 11, name: '011_block_cells', sql: m011 },
  { version: 12, name: '012_document_parents', sql: m012 },
  { version: 13, name: '013_subscription_tasks', sql: m013 },
  { version: 14, name: '014_break_glass_access', sql: m014 },
  { version: 15, name: '015_default_vertical', sql: m015 },
  { version: 16, name: '016_billing', sql: m016 },
  { version: 17, name: '017_request_trace', sql: m017 },
  { version: 19, name: '019_password_protected', sql: m019 },
  { version: 23, name: '023_document_findings', sql: m023 },
  { version: 25, name: '025_write_spread', sql: m025 },
  { version: 26, name: '026_dev_listeners', sql: m026 },
  { version: 27, name: '027_document_type_source', sql: m027 },
  { version: 28, name: '028_tenant_row_unlocked', sql: m028 },
  { version: 29, name: '029_block_chunks', sql: m029 },
  { version: 30, name: '030_delivery_finish_hot', sql: m030 },
  { version: 31, name: '031_job_claim_hot', sql: m031 },
  { version: 32, name: '032_delivery_subscription_index', sql: m032 },
  { version: 33, name: '033_held_jobs_delete', sql: m033 },
  { version: 34, name: '034_tenant_indexes_keyed_lookups', sql: m034 },
]
