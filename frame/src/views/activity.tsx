/**
 * The activity tab: the case's event stream, newest first.
 */
import type { FrameController } from '../controller'
import { label, tone, when } from '../format'

const summary = (data: string): { status?: string; text: string } => {
  try {
    const d = JSON.parse(data)
    return { status: d.status, text: [d.filename, d.status ? label(d.status) : undefined, d.error_code].filter(Boolean).join(' · ') }
  } catch {
    return { text: data }
  }
}

/** The event list. */
export function ActivityView({ controller }: { controller: FrameController }) {
  const { events } = controller.state
  return (
    <div class="activity">
      {events.status === 'failed' ? <p class="muted">The activity could not be loaded.</p> : null}
      {events.items.length === 0 && events.status !== 'failed' ? <p class="muted" data-empty="activity">No activity yet.</p> : null}
      <ul class="list" data-list="activity">
        {events.items.map((e) => {
          const s = summary(e.data)
          return (
            <li key={e.id || e.at} class="event" data-event={e.event}>
              <span class={`dot ${tone(s.status)}`} />
              <strong>{e.event}</strong>
              <span class="muted small">{s.text}</span>
              <span class="muted small when">{when(e.at, controller.state.timeZone)}</span>
            </li>
          )
        })}
      </ul>
    </div>
  )
}
