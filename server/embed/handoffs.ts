/**
 * Embed handoffs: POST /v1/embed/handoffs. A host's backend, holding an API key with `embed:mint`
 * (which grants nothing else), mints a single-use handoff for one case, one person and one host
 * origin. The mint never reveals whether the case or the person exists: it checks only the shape
 * of the request, and the exchange (sessions.ts) re-verifies every condition. Owns `embed_handoffs`.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import type { Tx } from '../db/connect'
import { accessControl, tenantOf } from '../auth/access'
import { problems, type FieldError } from '../http/problem'
import { refuseIdempotencyKey } from '../http/idempotency'
import { BODY_PROBLEMS, responses } from '../http/docs'
import { isEmail } from '../workspaces/users-store'
import { mintSecret } from './secrets'
import { originProblem } from './origins'
import { Handoff, HandoffCreate } from './schemas'

/** What a handoff is minted for. */
export interface HandoffInput { scenarioId: string; hostOrigin: string; subjectEmail: string; keyId: string | null }

/**
 * Stores a new handoff (only its hash) valid `ttlSeconds`, and returns the plaintext once. Not
 * idempotent on purpose: a replayable response would have to store the plaintext.
 */
export async function mintHandoff(sql: Tx, tenantId: string, input: HandoffInput, ttlSeconds: number) {
  const { plaintext, hash } = mintSecret()
  const [row] = await sql<{ expires_at: Date }[]>`
    insert into embed_handoffs (tenant_id, id, handoff_hash, scenario_id, host_origin, subject_email, expires_at, minted_by_key_id)
    values (${tenantId}, ${Bun.randomUUIDv7()}, ${hash}, ${input.scenarioId}, ${input.hostOrigin}, ${input.subjectEmail},
            now() + make_interval(secs => ${ttlSeconds}), ${input.keyId})
    returning expires_at`
  return { handoff: plaintext, expires_at: row!.expires_at.toISOString() }
}

/** The mint route. */
export function handoffRoutes(deps: AppDeps) {
  const { sql, config } = deps
  return new Elysia({ name: 'embed-handoffs' })
    .use(accessControl(deps.authenticate))
    .post('/v1/embed/handoffs', async ({ principal, body, set, request }) => {
      refuseIdempotencyKey(request, 'the handoff is never stored in plaintext, so a mint cannot be replayed; mint another')
      const tenantId = tenantOf(principal)
      const errors: FieldError[] = []
      const originWhy = originProblem(body.host_origin)
      if (originWhy) errors.push({ pointer: '/host_origin', message: originWhy })
      if (!isEmail(body.subject_email)) errors.push({ pointer: '/subject_email', message: 'must be an email address' })
      if (errors.length) throw problems.schema(errors)
      const minted = await mintHandoff(sql, tenantId, {
        scenarioId: body.scenario_id,
        hostOrigin: body.host_origin,
        subjectEmail: body.subject_email,
        keyId: principal.kind === 'api_key' ? principal.keyId : null,
      }, config.embedHandoffTtlSeconds)
      set.status = 201
      set.headers['cache-control'] = 'no-store'
      return minted
    }, {
      access: { scopes: ['embed:mint'] },
      body: HandoffCreate,
      detail: {
        summary: 'Mint a single-use embed handoff (API key with embed:mint, server-side only)',
        description: 'Never reveals whether the case or the person exists: an unknown one mints normally and its exchange fails. A request with an Idempotency-Key header is 422 and mints nothing: the handoff is never stored in plaintext, so a mint cannot be replayed.',
        tags: ['Embed'],
        responses: responses({ 201: Handoff }, BODY_PROBLEMS),
      },
    })
}
