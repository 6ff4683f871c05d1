/**
 * Observability: one request id (and W3C trace) followed from the access line into the job's log
 * lines, the delivery record and the webhook's `traceparent`; the metrics endpoint on its own
 * listener with exact counts after known traffic; label cardinality bounded after 10,000 requests
 * to distinct ids; no credential or presigned query string in any line.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, type TestApp } from '../helpers/app'
import { startReceiver, type Receiver } from '../helpers/https-receiver'
import { startNotifyApp } from '../jobs/support'
import { putBytes, settled, startUpload, textSample } from '../helpers/samples'
import { onLogLine } from '../../server/observability/log'
import { credentialIn } from '../helpers/log-hygiene'
import { parseTraceparent } from '../../server/observability/context'
import { publishedSet } from '../helpers/underwriting-pack'

setDefaultTimeout(120_000)

let app: TestApp
let receiver: Receiver
const lines: any[] = []
let stopWatching: () => void

beforeAll(async () => {
  stopWatching = onLogLine((line) => lines.push(JSON.parse(line)))
  receiver = await startReceiver()
  receiver.respond(() => ({ status: 204 }))
  app = await startNotifyApp({ allow: [receiver.host], env: { SVC_METRICS_PORT: '0' } })
}, 120_000)
afterAll(async () => {
  stopWatching()
  await app.stop()
  await receiver.stop()
}, 120_000)

const scrape = async () => {
  const r = await fetch(app.metricsUrl!)
  expect(r.status).toBe(200)
  return r.text()
}
/** The value of one sample line (`name{labels} value`), 0 when absent. */
const sample = (text: string, name: string, labels: Record<string, string>) => {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`)
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`)) continue
    const inner = line.slice(name.length + 1, line.indexOf('}'))
    const got = inner.split(',')
    if (want.every((w) => got.includes(w)) && got.length === want.length) return Number(line.slice(line.lastIndexOf(' ') + 1))
  }
  return 0
}

describe('one request id follows the work', () => {
  test('access line, the job lines, the delivery record and the webhook traceparent share the request id and trace', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:write', 'scenarios:read', 'notifications:write'])
    expect((await call(app.url, 'POST', '/v1/webhook-signing-secret/rotate', { token: key })).status).toBe(200)
    const scenario = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Traced case' } })
    expect(scenario.status).toBe(201)
    const file = { filename: 'letter.txt', contentType: 'text/plain', bytes: textSample() }
    const start = await startUpload(app, key, scenario.body.id, file)
    expect(start.status).toBe(201)
    expect((await putBytes(app, start.body.upload, file.bytes)).status).toBe(204)

    // The caller's trace: its trace id becomes the request id (in UUID spelling) and is kept.
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736'
    const inbound = `00-${traceId}-00f067aa0ba902b7-01`
    const complete = await call(app.url, 'POST', `/v1/scenarios/${scenario.body.id}/documents/${start.body.id}/complete`, {
      token: key, headers: { traceparent: inbound },
      body: { notifications: [{ channel: 'webhook', webhook: { url: receiver.url('/hooks/traced') } }] },
    })
    expect(complete.status).toBe(202)
    const requestId = complete.headers.get('x-request-id')!
    expect(requestId).toBe('4bf92f35-77b3-4da6-a3ce-929d0e0e4736')
    await settled(app, key, scenario.body.id, start.body.id)

    // The delivery record keeps the request id and the trace.
    const deadline = Date.now() + 20_000
    let delivery: any
    while (Date.now() < deadline) {
      ;[delivery] = await app.sql`select id, status, request_id, traceparent from notification_deliveries where tenant_id = ${t.id} and task_id = ${start.body.id}`
      if (delivery?.status === 'delivered') break
      await Bun.sleep(25)
    }
    expect(delivery).toMatchObject({ status: 'delivered', request_id: requestId })
    expect(parseTraceparent(delivery.traceparent)?.traceId).toBe(traceId)

    // The webhook carries the same trace id with a span of its own.
    const [hook] = receiver.byDelivery(delivery.id)
    const sent = parseTraceparent(hook!.headers.traceparent as string)
    expect(sent?.traceId).toBe(traceId)
    expect(sent?.parentId).not.toBe('00f067aa0ba902b7')

    // The access line of the complete: route template, status, duration, bytes; the request id.
    await Bun.sleep(50)
    const access = lines.filter((l) => l.message === 'request' && l.request_id === requestId)
    expect(access).toHaveLength(1)
    expect(access[0].bytes).toBe(Buffer.byteLength(complete.text))
    expect(access[0]).toMatchObject({
      level: 'info', method: 'POST', route: '/v1/scenarios/:scenarioId/documents/:documentId/complete', status: 202,
      request_id: requestId, trace_id: traceId, tenant_id: t.id, bytes: expect.any(Number), duration_ms: expect.any(Number),
    })
    // The job's lines: the ingestion job and the delivery job it enqueued, both under the request id.
    const jobLines = lines.filter((l) => l.request_id === requestId && l.job_id)
    expect(jobLines.map((l) => l.kind)).toEqual(expect.arrayContaining(['document_ingestion', 'deliver_notification']))
    expect(jobLines.every((l) => l.trace_id === traceId && l.tenant_id === t.id)).toBe(true)
    const deliveryLine = lines.find((l) => l.message === 'delivery delivered' && l.delivery_id === delivery.id)
    expect(deliveryLine).toMatchObject({ request_id: requestId, trace_id: traceId, channel: 'webhook', attempt: 1 })
    // The jobs table kept it too, while the jobs existed (they are deleted when done): the ids match.
    expect(lines.filter((l) => l.request_id === requestId).length).toBeGreaterThanOrEqual(4)
  })

  test('without inbound ids a fresh trace is made and the request id is that trace id; an invalid traceparent is replaced', async () => {
    const r = await call(app.url, 'GET', '/healthz')
    const id = r.headers.get('x-request-id')!
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
    const bad = await call(app.url, 'GET', '/healthz', { headers: { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' } })
    expect(bad.headers.get('x-request-id')).not.toContain('00000000-0000')
    await Bun.sleep(20)
    const line = lines.find((l) => l.message === 'request' && l.request_id === id)
    expect(line).toMatchObject({ route: '/healthz', status: 200, trace_id: id.replaceAll('-', '') })
    // A caller's safe X-Request-Id is the request id; the trace stays its own.
    const own = await call(app.url, 'GET', '/healthz', { headers: { 'x-request-id': 'caller-42', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' } })
    expect(own.headers.get('x-request-id')).toBe('caller-42')
    await Bun.sleep(20)
    expect(lines.find((l) => l.message === 'request' && l.request_id === 'caller-42')).toMatchObject({ trace_id: '0af7651916cd43dd8448eb211c80319c' })
  })

  test('access lines name route templates: no id, no query string, no presigned signature, no credential', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:write', 'scenarios:read'])
    const id = crypto.randomUUID()
    await call(app.url, 'GET', `/v1/scenarios/${id}?limit=5&signature=abcdefghijklmnopqrstuvwxyz`, { token: key })
    await call(app.url, 'PUT', `/v1/uploads/${t.id}/${id}?expires=1&signature=abcdefghijklmnopqrstuvwxyz012345`, { raw: 'x', headers: { 'content-type': 'text/plain' } })
    await call(app.url, 'GET', `/no/such/${id}`)
    await Bun.sleep(20)
    const recent = lines.filter((l) => l.message === 'request').slice(-3)
    expect(recent.map((l) => l.route)).toEqual(['/v1/scenarios/:scenarioId', '/v1/uploads/:tenantId/:documentId', '(unmatched)'])
    for (const l of lines) {
      const text = JSON.stringify(l)
      expect(credentialIn(text)).toBeUndefined()
      if (l.message === 'request') expect(text).not.toContain(id)
    }
  })
})

describe('metrics', () => {
  test('served on their own listener, never on the API port', async () => {
    expect(app.metricsUrl).toBeString()
    expect(new URL(app.metricsUrl!).port).not.toBe(new URL(app.url).port)
    expect((await call(app.url, 'GET', '/metrics')).status).toBe(404)
    const text = await scrape()
    for (const family of ['svc_http_requests_total', 'svc_http_request_duration_seconds', 'svc_jobs_runnable', 'svc_jobs_oldest_runnable_age_seconds',
      'svc_job_runs_total', 'svc_job_failures_total', 'svc_job_lease_expiries_total', 'svc_job_claims_total', 'svc_deliveries_total', 'svc_ingestion_pages_total',
      'svc_ingestion_page_seconds', 'svc_evaluations_total', 'svc_evaluation_duration_seconds', 'svc_sse_streams_open', 'svc_db_pool_connections',
      'svc_db_pool_waiting', 'svc_unhandled_rejections_total', 'nodejs_eventloop_lag_p99_seconds']) {
      expect(text, family).toContain(`# TYPE ${family} `)
    }
  })

  test('exact counts after known traffic', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:write', 'scenarios:read'])
    const before = await scrape()
    const base = (name: string, labels: Record<string, string>) => sample(before, name, labels)
    const created: string[] = []
    for (let i = 0; i < 3; i++) created.push((await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: `m${i}` } })).body.id)
    for (let i = 0; i < 5; i++) await call(app.url, 'GET', `/v1/scenarios/${created[i % 3]}`, { token: key })
    for (let i = 0; i < 2; i++) await call(app.url, 'GET', `/v1/scenarios/${crypto.randomUUID()}`, { token: key })
    await call(app.url, 'GET', '/v1/scenarios/not-a-uuid', { token: key })
    await Bun.sleep(100) // the metrics are recorded after each response is sent
    const after = await scrape()
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - base(name, labels)
    expect(delta('svc_http_requests_total', { method: 'POST', route: '/v1/scenarios', status: '201' })).toBe(3)
    expect(delta('svc_http_requests_total', { method: 'GET', route: '/v1/scenarios/:scenarioId', status: '200' })).toBe(5)
    expect(delta('svc_http_requests_total', { method: 'GET', route: '/v1/scenarios/:scenarioId', status: '404' })).toBe(2)
    expect(delta('svc_http_requests_total', { method: 'GET', route: '/v1/scenarios/:scenarioId', status: '400' })).toBe(1)
    expect(delta('svc_http_request_duration_seconds_count', { method: 'GET', route: '/v1/scenarios/:scenarioId', status: '200' })).toBe(5)
    expect(delta('svc_http_request_duration_seconds_bucket', { method: 'GET', route: '/v1/scenarios/:scenarioId', status: '200', le: '+Inf' })).toBe(5)
    // Jobs and deliveries of the first test: one ingestion and one delivery, both succeeded.
    expect(sample(after, 'svc_job_runs_total', { kind: 'document_ingestion', outcome: 'succeeded' })).toBeGreaterThanOrEqual(1)
    expect(sample(after, 'svc_deliveries_total', { channel: 'webhook', outcome: 'delivered', attempt: '1' })).toBe(1)
    expect(sample(after, 'svc_ingestion_pages_total', { source: 'text_layer' })).toBeGreaterThanOrEqual(2)
    expect(sample(after, 'svc_db_pool_connections', { state: 'size' })).toBe(app.db.embedded ? 1 : app.config.dbPoolMax) // the embedded database is one session
  })

  test('evaluations and their jobs are counted by engine and outcome, with durations', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:write', 'scenarios:read', 'question_sets:write', 'question_sets:read'])
    const { set } = await publishedSet(app, key)
    const before = await scrape()
    const scenario = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Evaluated' } })
    const run = await call(app.url, 'POST', `/v1/scenarios/${scenario.body.id}/evaluate`, { token: key, body: { question_set_id: set.id } })
    expect(run.status).toBe(202)
    const deadline = Date.now() + 20_000
    while ((await call(app.url, 'GET', `/v1/scenarios/${scenario.body.id}/evaluations/${run.body.id}`, { token: key })).body.status !== 'succeeded') {
      expect(Date.now()).toBeLessThan(deadline)
      await Bun.sleep(25)
    }
    await Bun.sleep(100)
    const after = await scrape()
    const delta = (name: string, labels: Record<string, string>) => sample(after, name, labels) - sample(before, name, labels)
    expect(delta('svc_evaluations_total', { engine: 'builtin', outcome: 'succeeded' })).toBe(1)
    expect(delta('svc_evaluation_duration_seconds_count', { engine: 'builtin', outcome: 'succeeded' })).toBe(1)
    expect(delta('svc_job_runs_total', { kind: 'evaluation_run', outcome: 'succeeded' })).toBe(1)
    expect(delta('svc_job_duration_seconds_count', { kind: 'evaluation_run' })).toBe(1)
  })

  test('label cardinality stays bounded after 10,000 requests to distinct ids', async () => {
    const t = await app.tenant()
    const key = await app.apiKey(t.id, ['scenarios:read'])
    const series = (text: string) => text.split('\n').filter((l) => l.startsWith('svc_http_requests_total{')).length
    const before = series(await scrape())
    const N = 10_000
    let next = 0
    await Promise.all(Array.from({ length: 50 }, async () => {
      while (next < N) {
        const i = next++
        // Distinct ids on three routes (found/not-found and malformed), some unmatched paths.
        const path = i % 10 === 0 ? `/v1/nothing/${i}` : i % 10 === 1 ? `/v1/scenarios/bad-${i}` : `/v1/scenarios/${crypto.randomUUID()}`
        const r = await fetch(app.url + path, { headers: { authorization: `Bearer ${key}` } })
        await r.arrayBuffer()
      }
    }))
    const text = await scrape()
    expect(series(text) - before).toBeLessThanOrEqual(3)
    expect(text).not.toMatch(/route="[^"]*[0-9a-f]{8}-[0-9a-f]{4}/)
    expect(sample(text, 'svc_http_requests_total', { method: 'GET', route: '(unmatched)', status: '404' })).toBeGreaterThanOrEqual(N / 10)
  })
})
