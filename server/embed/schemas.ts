/**
 * Request and response shapes of the embed routes.
 */
import { t } from 'elysia'
import { Timestamp, Uuid, Int, named } from '../../schemas/common'
import { HTTPS_ORIGIN_PATTERN, MEMBER_EMAIL_PATTERN } from '../../schemas/patterns'

/** POST /v1/embed/handoffs body. */
export const HandoffCreate = t.Object({
  scenario_id: Uuid,
  host_origin: t.String({ minLength: 1, maxLength: 255, pattern: HTTPS_ORIGIN_PATTERN, description: 'The exact lower-case https origin of the host page, e.g. https://host.example (scheme, host, optional port other than 443; no path, not even a trailing /).' }),
  subject_email: t.String({ minLength: 3, maxLength: 254, pattern: MEMBER_EMAIL_PATTERN, description: 'Email address of the workspace member the view is opened for.' }),
})

/** A minted handoff: shown once, single use, about 60 seconds. */
export const Handoff = named('EmbedHandoff', t.Object({
  handoff: t.String({ description: 'Opaque; hand it to the frame in svc:init, never in a URL.' }),
  expires_at: Timestamp,
}))

/** POST /v1/embed/sessions body (sent by the frame); checked by hand, every violation a 401. */
export const SessionCreate = t.Object({
  handoff: t.String(),
  host_origin: t.String({ description: 'The origin the frame pinned on svc:init.' }),
})

/** An embed session: an opaque read-only bearer for one case, held in frame memory only. */
export const EmbedSession = named('EmbedSession', t.Object({
  session: t.String({ description: 'Opaque bearer; send as Authorization: Bearer on GETs of the bound case.' }),
  scenario_id: Uuid,
  expires_at: Timestamp,
  expires_in: Int({ description: 'Seconds until the session lapses.' }),
  time_zone: t.String({ description: "The workspace's time zone (tenant settings `time_zone`, UTC when cleared): the frame shows times in it." }),
}))
