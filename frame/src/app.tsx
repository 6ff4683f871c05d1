/**
 * The frame UI: one screen per state. Ready shows the one case read-only: a header with the
 * permanent read-only attribution line, and three tabs (documents, evaluation, activity). No
 * control here changes anything in the service.
 */
import { useLayoutEffect, useReducer } from 'preact/hooks'
import type { FrameController } from './controller'
import type { Tab } from './protocol'
import { DocumentsView } from './views/documents'
import { EvaluationView } from './views/evaluation'
import { ActivityView } from './views/activity'

/** The attribution line: always shown in ready, never themeable. */
export const ATTRIBUTION = 'Read-only view · provided by the underwriting case service'
/** The no-handshake message. */
export const NO_HANDSHAKE_TEXT = 'This view was not opened from its host platform, so there is nothing to show.'
/** The terminal sentence (names no cause). */
export const TERMINAL_TEXT = 'This view is no longer available.'

/** The line naming the zone every time of the frame is shown in (the workspace's). */
export const zoneLine = (timeZone: string) => `Times in ${timeZone.replaceAll('_', ' ')}`

const TAB_LABELS: Record<Tab, string> = { documents: 'Documents', evaluation: 'Evaluation', activity: 'Activity' }

/** The whole frame. */
export function App({ controller }: { controller: FrameController }) {
  const [, rerender] = useReducer((n: number) => n + 1, 0)
  const s = controller.state
  // Subscribe as this render commits (a layout effect runs before render() returns, so before the
  // inbox hands over any message), and render again at once if the state moved meanwhile: a plain
  // effect subscribed only after the next frame, and a change made before that (a spent handoff's
  // 401 on a starved renderer) was never drawn, leaving a blank frame after svc:session-ended.
  useLayoutEffect(() => {
    const off = controller.subscribe(() => rerender(undefined))
    if (controller.state !== s) rerender(undefined)
    return off
  }, [controller])
  switch (s.phase) {
    case 'waiting':
      return <div class="blank" data-state="waiting" />
    case 'no-handshake':
      return <p class="notice" data-state="no-handshake" role="status">{NO_HANDSHAKE_TEXT}</p>
    case 'exchanging':
      return <div class="opening" data-state="exchanging" role="status" aria-label="Opening"><span /><span /><span /></div>
    case 'terminal':
      return <p class="notice" data-state="terminal" role="status">{TERMINAL_TEXT}</p>
  }
  const scenario = s.scenario.status === 'ok' ? s.scenario.value : null
  return (
    <div class="frame" data-state="ready">
      <header class="head">
        <p class="attribution">{ATTRIBUTION}</p>
        <h1 class="title">{scenario?.name ?? 'Case'}</h1>
        {scenario?.external_ref ? <p class="muted ref">{scenario.external_ref}</p> : null}
        {s.scenario.status === 'failed' ? <p class="muted">The case details could not be loaded.</p> : null}
        <p class="muted small zone" data-time-zone={s.timeZone}>{zoneLine(s.timeZone)}</p>
      </header>
      <nav class="tabs" role="tablist">
        {(Object.keys(TAB_LABELS) as Tab[]).map((tab) => (
          <button type="button" role="tab" class={s.view.tab === tab ? 'tab on' : 'tab'} aria-selected={s.view.tab === tab}
            data-tab={tab} onClick={() => controller.select({ tab })}>{TAB_LABELS[tab]}</button>
        ))}
      </nav>
      <div class="body" role="tabpanel">
        {s.view.tab === 'documents' ? <DocumentsView controller={controller} /> : null}
        {s.view.tab === 'evaluation' ? <EvaluationView controller={controller} /> : null}
        {s.view.tab === 'activity' ? <ActivityView controller={controller} /> : null}
      </div>
    </div>
  )
}
