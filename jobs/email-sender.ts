/**
 * The email channel: the envelope's information as readable copy (plain text and simple HTML),
 * unsigned, never document content (the envelope has none). Times are shown in the workspace's
 * `time_zone` (the envelope's JSON keeps UTC). Sent through the app's mailer (nodemailer: SMTP from
 * SVC_SMTP_URL, else .eml files).
 */
import type { Mailer, MailMessage } from '../server/mail/mailer'
import { formatInZone } from '../server/local-time'

/** The envelope fields the email is written from. */
export interface EnvelopeView {
  delivery_id: string
  event_type: string
  task_kind: string
  task_id: string
  tenant_id: string
  occurred_at: string
  outcome: { status: string; summary: string; error_code: string | null }
  links: { resource: string; ui: string }
}

const HEADLINE: Record<string, string> = {
  'task.completed': 'Task completed',
  'task.failed': 'Task failed',
  'task.stalled': 'Task on hold',
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!)

/** The message for one envelope: subject, plain text and simple HTML with the same facts; times in `timeZone`. */
export function renderEmail(to: string, e: EnvelopeView, timeZone = 'UTC'): MailMessage {
  const headline = HEADLINE[e.event_type] ?? 'Task notification'
  const kind = e.task_kind.replaceAll('_', ' ')
  const facts: [string, string][] = [
    ['Summary', e.outcome.summary],
    ['Task', `${kind} ${e.task_id}`],
    ['Outcome', e.outcome.status],
    ['Error code', e.outcome.error_code ?? 'none'],
    ['Occurred at', formatInZone(new Date(e.occurred_at), timeZone)],
    ...(e.links.resource ? [['API resource', e.links.resource] as [string, string]] : []),
    ...(e.links.ui ? [['Open in the application', e.links.ui] as [string, string]] : []),
    ['Delivery id', e.delivery_id],
  ]
  const text = [
    `${headline}: ${kind}`,
    '',
    ...facts.map(([k, v]) => `${k}: ${v}`),
    '',
    'You receive this because this address was subscribed to the task. Receivers de-duplicate on the delivery id.',
    '',
  ].join('\n')
  const html = [
    '<!doctype html><html><body style="font-family: sans-serif">',
    `<h1 style="font-size: 1.2em">${escapeHtml(headline)}: ${escapeHtml(kind)}</h1>`,
    '<table>',
    ...facts.map(([k, v]) => `<tr><th align="left">${escapeHtml(k)}</th><td>${/^https?:\/\//.test(v) ? `<a href="${escapeHtml(v)}">${escapeHtml(v)}</a>` : escapeHtml(v)}</td></tr>`),
    '</table>',
    '<p style="color: #555">You receive this because this address was subscribed to the task.</p>',
    '</body></html>',
  ].join('\n')
  return {
    to,
    subject: `${headline}: ${kind} - ${e.outcome.summary}`.slice(0, 200),
    text,
    html,
    headers: { 'SVC-Delivery-Id': e.delivery_id, 'SVC-Event-Type': e.event_type },
  }
}

/** Sends one envelope by email; resolves with the transport error class on failure, undefined on success. */
export async function sendEmail(mailer: Mailer, to: string, envelope: EnvelopeView, timeZone = 'UTC'): Promise<'smtp_error' | undefined> {
  try {
    await mailer.send(renderEmail(to, envelope, timeZone))
    return undefined
  } catch {
    return 'smtp_error'
  }
}
