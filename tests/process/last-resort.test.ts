// The last resort for a rejection nothing handled (server/observability/last-resort.ts): in a
// process of its own, as main.ts installs it, two such rejections are logged (the same error once
// within a minute, with the count), counted in svc_unhandled_rejections_total, and the process goes on to exit 0; without the handler Bun
// reports them and the process exits non-zero.
import { expect, test, setDefaultTimeout } from 'bun:test'
import { join } from 'node:path'

setDefaultTimeout(30_000)

const script = (install: boolean) => `
  import { createLogger } from ${JSON.stringify(join(import.meta.dir, '../../server/observability/log.ts'))}
  import { keepServingOnUnhandledRejection } from ${JSON.stringify(join(import.meta.dir, '../../server/observability/last-resort.ts'))}
  import { createMetrics } from ${JSON.stringify(join(import.meta.dir, '../../server/observability/metrics.ts'))}
  const metrics = createMetrics()
  ${install ? 'metrics.setCollectors({ unhandledRejections: keepServingOnUnhandledRejection(createLogger()) })' : ''}
  const boom = () => Promise.reject(Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' }))
  boom(); boom()
  await Bun.sleep(200)
  console.log((await metrics.registry.metrics()).split('\\n').find((l) => l.startsWith('svc_unhandled_rejections_total')))
  console.log('still serving')
`

async function run(install: boolean) {
  const p = Bun.spawn(['bun', '-e', script(install)], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited])
  return { out: out + err, code }
}

test('an unhandled rejection is logged once and the process keeps serving', async () => {
  const { out, code } = await run(true)
  expect(code).toBe(0)
  expect(out).toContain('still serving')
  const lines = out.split('\n').filter((l) => l.includes('unhandled promise rejection'))
  expect(lines).toHaveLength(1)
  expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', error_name: 'Error', error_code: 'ECONNRESET', error: 'read ECONNRESET', unhandled_rejections: 1 })
  // Both are counted for operators to alert on (svc_unhandled_rejections_total).
  expect(out).toContain('svc_unhandled_rejections_total 2')
})

test('without the handler the same rejection ends the process (what the handler guards against)', async () => {
  const { out, code } = await run(false)
  expect(code).not.toBe(0)
  expect(out).toContain('read ECONNRESET')
})
