/**
 * Task notifications: subscriptions, deliveries, the webhook signing secret and the envelope, as
 * request and response shapes.
 */
import { t, type Static } from 'elysia'
import { Type } from '@sinclair/typebox'
import { Timestamp, Uuid, Int, OneOf, named, oneOfBy, pageQuery } from './common'
import { HTTPS_URL_PATTERN, RECIPIENT_EMAIL_PATTERN } from './patterns'

/** The task kinds of the spec (the list grows; receivers ignore unknown kinds). */
export const TASK_KINDS = [
  'generation_run', 'diff_run', 'document_ingestion', 'guideline_ingestion', 'structure_task',
  'question_set_publish', 'evaluation_run', 'report_generated', 'directive_review',
  'billing_reconciliation',
] as const
/** A task kind. */
export type TaskKind = (typeof TASK_KINDS)[number]

/** An email target. */
export const EmailTarget = t.Object({
  address: t.String({ format: 'email', pattern: RECIPIENT_EMAIL_PATTERN, maxLength: 254, description: 'The recipient address.' }),
})

/** A webhook target: one https URL. */
export const WebhookTarget = t.Object({
  url: t.String({ format: 'uri', pattern: HTTPS_URL_PATTERN, minLength: 1, maxLength: 2048, description: 'An absolute https URL (http and other schemes are refused at subscribe time), without userinfo.' }),
})

/**
 * The targets as a subscription shows them: the shapes without the request patterns, so a
 * subscription stored before a rule was stated still reads back (responses are validated too).
 */
const StoredEmailTarget = t.Object({ address: t.String({ format: 'email', maxLength: 254, description: 'The recipient address.' }) })
const StoredWebhookTarget = t.Object({ url: t.String({ minLength: 1, maxLength: 2048, description: 'The https URL deliveries are POSTed to.' }) })

/** One inline item: `{channel: 'email', email: {address}}` or `{channel: 'webhook', webhook: {url}}`. */
export const InlineNotification = oneOfBy('channel', t.Object({
  channel: t.Union([t.Literal('email'), t.Literal('webhook')]),
  email: t.Optional(EmailTarget),
  webhook: t.Optional(WebhookTarget),
}))
/** One inline notification item. */
export type InlineNotification = Static<typeof InlineNotification>

/**
 * TypeBox schema of the optional `notifications` body member; use as
 * `notifications: InlineNotifications` in a body schema.
 */
export const InlineNotifications = t.Optional(t.Array(InlineNotification, {
  maxItems: 20,
  description: 'Optional subscriptions to this task: each item is {channel: "email", email: {address}} or {channel: "webhook", webhook: {url}}. Needs the notification write permission.',
}))

/** The channel of a subscription. */
export const Channel = OneOf(['email', 'webhook'])

/** A task kind of the spec's task-kind table. */
export const TaskKindSchema = t.Union(TASK_KINDS.map((k) => t.Literal(k)), { description: 'One of the task kinds (the list grows; receivers ignore kinds they do not know).' })

/** POST /v1/task-notification-subscriptions body. */
export const SubscriptionCreate = oneOfBy('channel', t.Object({
  task_kind: TaskKindSchema,
  task_id: Uuid,
  channel: Channel,
  email: t.Optional(EmailTarget),
  webhook: t.Optional(WebhookTarget),
}))

/** A subscription as every endpoint returns it. */
export const Subscription = named('Subscription', t.Object({
  id: Uuid,
  task_kind: TaskKindSchema,
  task_id: Uuid,
  channel: Channel,
  email: t.Optional(StoredEmailTarget),
  webhook: t.Optional(StoredWebhookTarget),
  status: OneOf(['active']),
  created_at: Timestamp,
}))

/** GET /v1/task-notification-subscriptions query: the page query plus optional task filters. */
export const SubscriptionListQuery = Type.Object({
  ...pageQuery,
  task_kind: Type.Optional(TaskKindSchema),
  task_id: Type.Optional(Type.String({ format: 'uuid' })),
})

/** Path parameters naming a subscription. */
export const SubscriptionParams = t.Object({ subscriptionId: Uuid })
/** Path parameters naming a delivery of a subscription. */
export const DeliveryParams = t.Object({ subscriptionId: Uuid, deliveryId: Uuid })

/** The notification envelope: the body of every delivery, both channels. */
export const Envelope = named('NotificationEnvelope', t.Object({
  schema_version: Int({ description: 'Currently 1.' }),
  delivery_id: Uuid,
  event_type: OneOf(['task.completed', 'task.failed', 'task.stalled']),
  task_kind: TaskKindSchema,
  task_id: Uuid,
  tenant_id: Uuid,
  occurred_at: Timestamp,
  sent_at: Timestamp,
  outcome: t.Object({
    status: OneOf(['succeeded', 'failed']),
    summary: t.String(),
    error_code: t.Union([t.String(), t.Null()]),
  }),
  links: t.Object({ resource: t.String(), ui: t.String() }),
}))

/** One entry of a delivery's history: a send (counted) or a refusal (not counted). */
export const DeliveryAttempt = t.Object({
  attempted_at: Timestamp,
  cycle: Int({ description: 'The retry cycle (1, then one more per redeliver).' }),
  counted: t.Boolean({ description: 'Whether the attempt consumed one of the 8 attempts of its cycle.' }),
  duration_ms: Int(),
  response_status: t.Optional(Int({ description: 'The HTTP status the receiver answered.' })),
  error: t.Optional(t.String({ description: 'Error class: timeout, connect_timeout, connection_error, tls_error, dns_error, smtp_error, refused_http_url, refused_private_address, refused_no_signing_secret.' })),
})

/** A delivery as every endpoint returns it. */
export const Delivery = named('Delivery', t.Object({
  id: Uuid,
  delivery_id: Uuid,
  subscription_id: Uuid,
  task_kind: TaskKindSchema,
  task_id: Uuid,
  event_type: OneOf(['task.completed', 'task.failed', 'task.stalled']),
  channel: Channel,
  status: OneOf(['pending', 'delivered', 'dead_lettered']),
  attempts: Int({ description: 'Cumulative; never reset by redeliver.' }),
  cycle: Int(),
  next_attempt_at: t.Optional(Timestamp),
  delivered_at: t.Optional(Timestamp),
  dead_lettered_at: t.Optional(Timestamp),
  dead_letter_reason: t.Optional(OneOf(['attempts_exhausted', 'refused_http_url', 'refused_private_address', 'refused_no_signing_secret', 'internal_error'])),
  history: t.Array(DeliveryAttempt),
  payload: Envelope,
  created_at: Timestamp,
  updated_at: Timestamp,
}))

/** GET /v1/webhook-signing-secret: metadata only. */
export const SigningSecretMetadata = named('SigningSecret', t.Object({
  id: Uuid,
  secret_last4: t.String(),
  created_at: Timestamp,
  rotated_at: Timestamp,
  previous: t.Optional(t.Object({
    id: Uuid,
    secret_last4: t.String(),
    revoke_at: Timestamp,
  }, { description: 'The rotated-out secret while it is still valid.' })),
}))

/** POST /v1/webhook-signing-secret/rotate: the only place the full secret is shown. */
export const SigningSecretRotated = named('SigningSecretRotation', t.Object({
  id: Uuid,
  secret: t.String(),
  secret_last4: t.String(),
  rotated_at: Timestamp,
  previous_revoke_at: t.Optional(Timestamp),
}))
