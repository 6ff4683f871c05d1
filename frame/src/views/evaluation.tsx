/**
 * The evaluation tab: the decision (with a reviewer's override beside it), the answers and their
 * evidence. Choosing an answer selects its fact; an evidence quote opens its document at the
 * block it was taken from.
 */
import type { FrameController } from '../controller'
import { label, tone } from '../format'

const factOf = (a: any): string => a.fact_path ?? a.question_key

/** Decision, answers and evidence of the latest evaluation. */
export function EvaluationView({ controller }: { controller: FrameController }) {
  const s = controller.state
  if (s.evaluation.status === 'loading') return <p class="muted">Loading the evaluation…</p>
  if (s.evaluation.status === 'failed') return <p class="muted">The evaluation could not be loaded.</p>
  const { answers, decision, evidence } = s.evaluation.value
  if (!decision && !answers?.length) return <p class="muted" data-empty="evaluation">No evaluation yet.</p>
  const byId = new Map<string, any>((evidence ?? []).map((e: any) => [e.id, e]))
  const outcome = decision?.final_outcome ?? decision?.outcome
  return (
    <div class="evaluation">
      {decision ? (
        <section class="decision" data-decision={outcome}>
          <div class="answer-head">
            <strong>Decision</strong>
            <span class={`badge ${tone(outcome)}`}>{label(outcome)}</span>
          </div>
          {decision.override ? <p class="muted small">Reviewed: {label(decision.override.outcome)} (computed {label(decision.outcome)}) — {decision.override.reason}</p> : null}
          {Array.isArray(decision.reasons) && decision.reasons.length ? (
            <ul>{decision.reasons.map((r: any, i: number) => (
              <li key={i}>{typeof r === 'string' ? r : `${r.question_key}: ${label(r.finding)}${r.criticality ? ` (${r.criticality})` : ''}`}</li>
            ))}</ul>
          ) : null}
        </section>
      ) : null}
      <ul class="list">
        {(answers ?? []).map((a: any) => (
          <li key={a.id} class={`answer${factOf(a) === s.view.factPath ? ' hl' : ''}`} data-fact={factOf(a)}>
            <button type="button" class="answer-head plain" onClick={() => controller.select({ factPath: factOf(a) })}>
              <strong>{a.question_key}</strong>
              <span class={`badge ${tone(a.status)}`}>{label(a.status)}</span>
            </button>
            <p>{a.value === null || a.value === undefined ? '—' : String(a.value)}</p>
            {(a.evidence_ids ?? []).map((id: string) => byId.get(id)).filter(Boolean).map((e: any) => (
              <button type="button" class="quote" key={e.id} data-evidence={e.id}
                onClick={() => controller.select({ tab: 'documents', documentId: e.document_id, blockId: e.block_id ?? null })}>
                “{e.quote}” <span class="muted small">page {e.page}</span>
              </button>
            ))}
          </li>
        ))}
      </ul>
    </div>
  )
}
