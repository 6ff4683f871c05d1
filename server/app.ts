/**
 * The application: HTTP plumbing and one plugin per resource family. Tests and main.ts both build
 * it with createApp(deps).
 */
import { Elysia } from 'elysia'
import type { AppDeps } from './deps'
import { requestId } from './http/request-id'
import { observeHttp } from './observability/http'
import { escapedErrorResponse, problemErrors } from './http/errors'
import { RouteMethods } from './http/methods'
import { jsonBody } from './http/body'
import { serveOpenApiDocument } from './http/openapi-document'
import { healthRoutes } from './resources/health'
import { scenarioRoutes } from './resources/scenarios'
import { verticalRoutes } from './resources/verticals'
import { documentRoutes } from './resources/documents'
import { uploadRoutes } from './resources/uploads'
import { fileTypeRoutes } from './resources/file-types'
import { eventRoutes } from './resources/events'
import { tenantRoutes } from './resources/tenants'
import { invitationRoutes } from './resources/invitations'
import { userRoutes } from './resources/users'
import { apiKeyRoutes } from './resources/api-keys'
import { tenantSettingsRoutes } from './resources/tenant-settings'
import { auditRoutes } from './resources/audit'
import { breakGlassRoutes } from './resources/break-glass'
import { notificationRoutes } from './notifications/routes'
import { embedRoutes } from './embed'
import { questionSetRoutes } from './resources/question-sets'
import { evaluationRoutes } from './resources/evaluations'
import { answerRoutes } from './resources/answers'
import { reportRoutes } from './resources/reports'
import { questionGroupRoutes } from './resources/question-groups'
import { generationRunRoutes } from './resources/generation-runs'
import { budgetRoutes } from './authoring/budget-admin'
import { diffRunRoutes } from './resources/diff-runs'
import { structureTaskRoutes } from './resources/structure-tasks'
import { supersessionRoutes } from './resources/supersessions'
import { billingRoutes } from './resources/billing'
import { operatorRoutes } from './resources/operator'
import { readFront } from './resources/read-front'

/** Builds the whole HTTP application over its dependencies. */
export function createApp(deps: AppDeps) {
  const methods = new RouteMethods()
  // The hottest read answered from Bun's router ahead of Elysia (SVC_READ_FRONT; read-front.ts):
  // Elysia merges `serve.routes` over its own, and the front hands every request it does not fully
  // handle to the app's fetch.
  const front = readFront(deps)
  // normalize 'typebox': unknown members are dropped, but a value of the wrong type is reported where it is (Elysia's default
  // mirror reads a string as an array of characters and points inside it).
  // Never Bun's development mode (its default unless NODE_ENV=production, and Elysia's): there an
  // error escaping the app is answered with an HTML page carrying its message and stack. What
  // escapes is a problem like any other (escapedErrorResponse).
  const app = new Elysia({ name: 'svc', normalize: 'typebox', serve: { development: false, error: escapedErrorResponse, ...(front ? { routes: front.routes } : {}) } })
    .use(requestId)
    .use(observeHttp({ log: deps.log, metrics: deps.metrics, accessLog: deps.config.accessLog }))
    .use(problemErrors(methods))
    .use(jsonBody(deps.config.maxJsonBodyBytes))
    .use(healthRoutes(deps))
    .use(verticalRoutes(deps))
    .use(scenarioRoutes(deps))
    .use(documentRoutes(deps))
    .use(uploadRoutes(deps))
    .use(fileTypeRoutes(deps))
    .use(eventRoutes(deps))
    .use(tenantRoutes(deps))
    .use(invitationRoutes(deps))
    .use(userRoutes(deps))
    .use(apiKeyRoutes(deps))
    .use(tenantSettingsRoutes(deps))
    .use(auditRoutes(deps))
    .use(breakGlassRoutes(deps))
    .use(notificationRoutes(deps))
    .use(embedRoutes(deps))
    .use(questionSetRoutes(deps))
    .use(evaluationRoutes(deps))
    .use(answerRoutes(deps))
    .use(reportRoutes(deps))
    .use(questionGroupRoutes(deps))
    .use(generationRunRoutes(deps))
    .use(budgetRoutes(deps))
    .use(diffRunRoutes(deps))
    .use(structureTaskRoutes(deps))
    .use(supersessionRoutes(deps))
    .use(billingRoutes(deps))
    .use(operatorRoutes(deps))
  const served = serveOpenApiDocument(app, deps.config.baseUrl)
  methods.load(served.routes)
  front?.fallBackTo((request) => served.fetch(request))
  return served
}

/** The type of the built application. */
export type App = ReturnType<typeof createApp>
