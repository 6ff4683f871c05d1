/**
 * Authorization: every route declares who may call it (an AccessRule) through the `access` macro.
 * The rule is also written into the route's OpenAPI operation as `x-svc-access`, so the document is
 * the authorization table and a test can walk it.
 */
import { Elysia } from 'elysia'
import { ProblemError, problems } from '../http/problem'
import { problemResponses } from '../http/docs'
import { contextOfRequest, requestIdOf } from '../http/request-id'
import type { Authenticator, Principal, Role, Scope } from './principal'
import type { BreakGlassRead } from './break-glass-access'

/** Who may call a route. Absent members allow nobody of that kind. */
export interface AccessRule {
  /** No credential needed (health, the OpenAPI document). */
  public?: true
  /** Workspace users with one of these roles. */
  roles?: readonly Role[]
  /** API keys holding at least one of these scopes. */
  scopes?: readonly Scope[]
  /** A human-only surface: API keys are refused whatever their scopes. */
  humanOnly?: true
  /** Platform operators (JWT subjects of SVC_OPERATOR_SUBJECTS). */
  operator?: true
  /** Embed sessions, for GETs on their bound case (the route names the case in `scenarioId`). */
  embed?: true
  /**
   * Any person with a valid user token, member or not (accepting an invitation): resolves a
   * non-member to a `person` principal instead of 401 / not_admitted.
   */
  invitee?: true
  /**
   * A read of a workspace's cases, documents, answers or reports (GET routes only): an operator
   * holding an open break-glass grant to the workspace may call it; each call is audited (see
   * break-glass-access.ts).
   */
  breakGlass?: true
}

/** Every role, for read routes open to all members. */
export const ANY_ROLE: readonly Role[] = ['admin', 'reviewer', 'underwriter', 'viewer']
/** Roles that change cases. */
export const CASE_WRITERS: readonly Role[] = ['admin', 'reviewer', 'underwriter']

/** True for a rule of the operator surface: operators and nobody else. */
export function isOperatorOnly(rule: AccessRule): boolean {
  return rule.operator === true && !rule.public && !rule.roles?.length && !rule.scopes?.length && !rule.embed && !rule.invitee
}

/** The one refusal of the operator surface, whatever the workspace credential (role, scope, state). */
export const operatorOnlyRefusal = () => problems.forbidden('This operation is for platform operators only.')

/** Refuses a principal that the rule does not admit; returns normally otherwise. */
export function authorize(rule: AccessRule, p: Principal, request: { method: string; scenarioId?: string }): void {
  // The operator surface (outside the /v1 promise) answers every workspace credential alike: the same
  // 403 for any role, any key scope, an embed session or a suspended workspace's credential.
  if (isOperatorOnly(rule)) {
    if (p.kind === 'operator' || (p.kind === 'user' && p.operator)) return
    throw operatorOnlyRefusal()
  }
  if ('tenantStatus' in p && p.tenantStatus !== 'active') {
    throw new ProblemError('tenant_suspended', 'This workspace is suspended.')
  }
  switch (p.kind) {
    case 'operator':
      if (rule.operator || rule.invitee) return
      break
    case 'person':
      if (rule.invitee) return
      break
    case 'user':
      if (rule.roles?.includes(p.role) || (rule.operator && p.operator) || rule.invitee) return
      break
    case 'api_key':
      if (rule.humanOnly) throw problems.forbidden('API keys cannot use this human-only surface.')
      if (rule.scopes?.some((s) => p.scopes.includes(s))) return
      break
    case 'break_glass':
      // Reads only, of the routes that say so; never a write, whatever the route.
      if (rule.breakGlass && request.method === 'GET') return
      break
    case 'embed':
      // An embed session reads its own case only; anything else looks like it does not exist.
      if (rule.embed && request.method === 'GET') {
        if (request.scenarioId === p.scenarioId) return
        throw problems.notFound()
      }
      break
  }
  throw problems.forbidden()
}

/** The workspace a principal acts in; operators without a membership have none (403). */
export function tenantOf(p: Principal): string {
  if (p.kind === 'operator' || p.kind === 'person') throw problems.forbidden('This operation needs a workspace credential.')
  return p.tenantId
}

const describeRule = (rule: AccessRule) => ({
  public: rule.public ?? false,
  roles: rule.roles ?? [],
  scopes: rule.humanOnly ? [] : rule.scopes ?? [],
  human_only: rule.humanOnly ?? false,
  operator: rule.operator ?? false,
  embed: rule.embed ?? false,
  invitee: rule.invitee ?? false,
  break_glass: rule.breakGlass ?? false,
})


/** OpenAPI annotations of a rule: the access table entry, security and the auth problems. */
function accessDetail(rule: AccessRule): DocumentDetail {
  return {
    'x-svc-access': describeRule(rule),
    ...(rule.public ? {} : { security: [{ bearer: [] }] }),
    responses: problemResponses(rule.public ? ['internal'] : ['unauthorized', 'forbidden', 'tenant_suspended', 'not_admitted', 'internal', 'unavailable']),
  } as DocumentDetail
}

type DocumentDetail = NonNullable<Parameters<Elysia['get']>[2]> extends { detail?: infer D } ? D : never

/** The request header that names the workspace an operator reads under break-glass. */
export const TENANT_HEADER = 'svc-tenant-id'

/** What the audit chain records of a read that break-glass may admit. */
function breakGlassRead(request: Request): BreakGlassRead {
  // Path and query as sent, cut from the absolute URL (every GET of a case route passes here: no URL object).
  const url = request.url
  return { tenantHeader: request.headers.get(TENANT_HEADER), method: request.method, path: url.slice(url.indexOf('/', url.indexOf('//') + 2)), httpRequestId: requestIdOf(request) }
}

/** Principals resolved in `transform`, handed to `resolve` (which runs after validation). */
const resolved = new WeakMap<Request, Principal>()

/**
 * The `access` macro: authenticates, authorizes and exposes `principal` to the handler. It runs in
 * `transform`, before schema validation, so a caller without a valid credential gets 401 and a
 * refused one 403 whatever the body, and a malformed request learns nothing before authorization.
 */
export function accessControl(authenticate: Authenticator) {
  return new Elysia({ name: 'access-control' }).macro({
    access: (rule: AccessRule) => ({
      detail: accessDetail(rule),
      async transform({ request, params }) {
        if (rule.public) return
        const breakGlass = rule.breakGlass && request.method === 'GET' ? breakGlassRead(request) : undefined
        const principal = await authenticate(request.headers.get('authorization'), { admitPerson: rule.invitee === true, breakGlass })
        // The workspace is known from here on: the access line and later log lines name it.
        if ('tenantId' in principal && principal.tenantId) contextOfRequest(request).tenantId = principal.tenantId
        authorize(rule, principal, { method: request.method, scenarioId: (params as Record<string, string | undefined>)?.scenarioId })
        resolved.set(request, principal)
      },
      resolve({ request }) {
        return { principal: resolved.get(request) as Principal }
      },
    }),
  })
}
