/**
 * The frame message protocol (spec, Events: Frame messages): the envelope, the view object and its
 * validation. Pure functions; the controller applies them.
 */

/** The envelope version this frame speaks. */
export const SVC_VERSION = 1

/** The frame's tabs. */
export const TABS = ['documents', 'evaluation', 'activity'] as const
export type Tab = (typeof TABS)[number]

/** The document viewer's panes. */
export const PANES = ['pages', 'text'] as const
export type Pane = (typeof PANES)[number]

/** What the reader sees: the view object of svc:navigate and svc:ready (scenarioId added on send). */
export interface View {
  tab: Tab
  documentId: string | null
  blockId: string | null
  factPath: string | null
  documentPane: Pane
}

/** The view on arrival. */
export const INITIAL_VIEW: View = { tab: 'documents', documentId: null, blockId: null, factPath: null, documentPane: 'pages' }

/** svc:error codes. */
export type ErrorCode = 'unsupported_version' | 'invalid_message' | 'not_in_scope' | 'invalid_token' | 'insufficient_contrast'

const VIEW_KEYS = new Set(['tab', 'documentId', 'blockId', 'factPath', 'documentPane', 'scenarioId'])

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)
const optionalString = (v: unknown) => v === undefined || v === null || (typeof v === 'string' && v.length > 0 && v.length <= 512)

/** The result of checking a requested view before any lookup. */
export type ViewCheck = { ok: View } | { error: 'invalid_message' | 'not_in_scope' }

/**
 * Checks a view object from the host. It is unexpressible (invalid_message) when it is not an
 * object, names an unknown member or tab, or combines members no screen shows (a block
 * without a document, a document outside the documents tab, a fact outside the evaluation tab).
 * A scenarioId other than the bound case is not_in_scope. Omitted members take these defaults:
 * no document, no block, no fact, the pages pane.
 */
export function checkView(view: unknown, boundScenarioId: string): ViewCheck {
  if (!isObject(view)) return { error: 'invalid_message' }
  if (Object.keys(view).some((k) => !VIEW_KEYS.has(k))) return { error: 'invalid_message' }
  const { tab, documentId, blockId, factPath, documentPane, scenarioId } = view
  if (typeof tab !== 'string' || !(TABS as readonly string[]).includes(tab)) return { error: 'invalid_message' }
  if (!optionalString(documentId) || !optionalString(blockId) || !optionalString(factPath)) return { error: 'invalid_message' }
  if (documentPane !== undefined && !(PANES as readonly unknown[]).includes(documentPane)) return { error: 'invalid_message' }
  if (scenarioId !== undefined && typeof scenarioId !== 'string') return { error: 'invalid_message' }
  const doc = (documentId as string | null | undefined) ?? null
  const block = (blockId as string | null | undefined) ?? null
  const fact = (factPath as string | null | undefined) ?? null
  if (doc !== null && tab !== 'documents') return { error: 'invalid_message' }
  if (block !== null && doc === null) return { error: 'invalid_message' }
  if (fact !== null && tab !== 'evaluation') return { error: 'invalid_message' }
  if (scenarioId !== undefined && scenarioId !== boundScenarioId) return { error: 'not_in_scope' }
  return { ok: { tab: tab as Tab, documentId: doc, blockId: block, factPath: fact, documentPane: (documentPane as Pane | undefined) ?? 'pages' } }
}

/** The view object as sent to the host. */
export function viewMessage(view: View, scenarioId: string) {
  return { ...view, scenarioId }
}
