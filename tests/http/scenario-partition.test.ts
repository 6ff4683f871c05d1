/**
 * A case is read from its own partition of `scenarios` (issue 30: the parent table's prepared
 * lookup was re-planned on every execution). The partition computed by the service must be the one
 * the database stored the row in, for time-ordered and random ids alike; a lookup through the API
 * finds every case, and a case id that is no UUID still answers as before.
 */
import { afterAll, beforeAll, describe, expect, test, setDefaultTimeout } from 'bun:test'
import { call, startApp, type TestApp } from '../helpers/app'
import { findScenario } from '../../server/scenarios/store'
import { SCENARIO_PARTITIONS, scenarioPartition } from '../../server/scenarios/partition'

setDefaultTimeout(120_000)

let app: TestApp
let tenantId: string
let key: string

beforeAll(async () => {
  app = await startApp({ runner: false })
  tenantId = (await app.tenant()).id
  key = await app.apiKey(tenantId, ['scenarios:read', 'scenarios:write'])
}, 120_000)
afterAll(() => app.stop(), 120_000)

describe('scenario partitions', () => {
  test('the partition computed for an id is the one the database stores it in (3,000 ids, v7 and v4)', async () => {
    const ids = [
      ...Array.from({ length: 1500 }, () => Bun.randomUUIDv7()),
      ...Array.from({ length: 1500 }, () => crypto.randomUUID()),
      '00000000-0000-0000-0000-000000000000', 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    ]
    await app.sql`insert into scenarios (tenant_id, id, name) select ${tenantId}, unnest(${ids}::uuid[]), 'partition probe'`
    const rows = await app.sql<{ id: string; part: string }[]>`
      select id::text as id, tableoid::regclass::text as part from scenarios where tenant_id = ${tenantId} and name = 'partition probe'`
    expect(rows.length).toBe(ids.length)
    const wrong = rows.filter((r) => `scenarios_p${scenarioPartition(r.id)}` !== r.part)
    expect(wrong).toEqual([])
    // Every partition was used: the check covers all of them.
    expect(new Set(rows.map((r) => r.part)).size).toBe(SCENARIO_PARTITIONS)
    // An upper-case spelling names the same case.
    expect(scenarioPartition(ids[0]!.toUpperCase())).toBe(scenarioPartition(ids[0]!))
    for (const id of ids.slice(0, 50)) expect((await findScenario(app.sql, tenantId, id))?.id).toBe(id)
  })

  test('cases created through the API are found through the API; a foreign or unknown id is 404', async () => {
    for (let i = 0; i < 16; i++) {
      const created = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: `case ${i}` } })
      expect(created.status).toBe(201)
      const read = await call(app.url, 'GET', `/v1/scenarios/${created.body.id}`, { token: key })
      expect(read.status).toBe(200)
      expect(read.body.name).toBe(`case ${i}`)
    }
    const other = await app.tenant()
    const otherKey = await app.apiKey(other.id, ['scenarios:read', 'scenarios:write'])
    const foreign = await call(app.url, 'POST', '/v1/scenarios', { token: otherKey, body: { name: 'theirs' } })
    expect((await call(app.url, 'GET', `/v1/scenarios/${foreign.body.id}`, { token: key })).status).toBe(404)
    expect((await call(app.url, 'GET', `/v1/scenarios/${Bun.randomUUIDv7()}`, { token: key })).status).toBe(404)
  })

  test('a string that is no UUID is read from the parent table (no partition is guessed)', async () => {
    expect(scenarioPartition('not-a-uuid')).toBeNull()
    expect(scenarioPartition('01a214be-d513-78c6-a3a7-c5d78211939')).toBeNull()
    const r = await call(app.url, 'GET', '/v1/scenarios/not-a-uuid', { token: key })
    expect(r.status).toBeGreaterThanOrEqual(400)
    expect(r.status).toBeLessThan(500)
  })
})
