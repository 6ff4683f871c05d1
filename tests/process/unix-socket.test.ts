// DATABASE_URL in libpq's Unix-socket spelling (`?host=/var/run/postgresql`): the service, the CLI
// and migrations reach PostgreSQL over its socket, not loopback TCP.
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { connectionOptions, postgresClient } from '../../server/db/connect'
import { createTestDatabase, type TestDatabase } from '../helpers/database'
import { runCli, spawnService, type ServiceProcess } from '../helpers/service-process'
import { call } from '../helpers/app'
import { skipTitle, NEEDS_POSTGRES } from '../helpers/skip-reason'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const SOCKET_DIR = process.env.SVC_TEST_PG_SOCKET_DIR ?? '/var/run/postgresql'
const available = !!process.env.DATABASE_URL && existsSync(join(SOCKET_DIR, `.s.PGSQL.${new URL(process.env.DATABASE_URL).port || 5432}`))
if (!available) console.warn(`unix-socket: 2 tests skipped (the Unix-socket client, the CLI and service end to end): they need DATABASE_URL and a PostgreSQL socket in ${SOCKET_DIR}`)
const dataDir = mkdtempSync(join(tmpdir(), 'svc-socket-'))
let database: TestDatabase
let socketUrl: string
let svc: ServiceProcess | undefined

beforeAll(async () => {
  database = await createTestDatabase()
  if (!available) return
  const url = new URL(database.url!)
  url.searchParams.set('host', SOCKET_DIR)
  socketUrl = url.toString()
})
afterAll(async () => {
  await svc?.stop()
  await database.drop()
  rmSync(dataDir, { recursive: true, force: true })
})

test('the host parameter becomes the socket directory and leaves the URL porsager reads', () => {
  expect(connectionOptions('postgres://svc:pw@db.internal:6432/svc?sslmode=require')).toEqual({ url: 'postgres://svc:pw@db.internal:6432/svc?sslmode=require' })
  expect(connectionOptions('postgres://svc@localhost/svc?host=%2Frun%2Fpostgresql&application_name=x')).toEqual({ url: 'postgres://svc@localhost/svc?application_name=x', host: '/run/postgresql' })
  expect(() => connectionOptions('postgres://svc@localhost/svc?host=db.internal')).toThrow(/Unix-socket directory/)
})

test.skipIf(!available)(skipTitle('a client of a ?host=/dir URL talks over the Unix socket', NEEDS_POSTGRES, !available && `no PostgreSQL socket in ${SOCKET_DIR}`), async () => {
  const sql = postgresClient(socketUrl, { max: 1, onnotice: () => {} })
  try {
    const [row] = await sql<{ addr: string | null; db: string }[]>`select inet_server_addr() as addr, current_database() as db`
    expect(row!.addr).toBeNull() // null only for a Unix-socket connection
    expect(row!.db).toBe(new URL(database.url!).pathname.slice(1))
  } finally {
    await sql.end()
  }
})

test.skipIf(!available)(skipTitle('the CLI and the service run on a Unix-socket DATABASE_URL end to end', NEEDS_POSTGRES, !available && `no PostgreSQL socket in ${SOCKET_DIR}`), async () => {
  const env = { DATABASE_URL: socketUrl, SVC_DATA_DIR: dataDir, SVC_SECRET_KEY: Buffer.alloc(32, 7).toString('base64') }
  expect((await runCli(['migrate'], env)).code).toBe(0)
  expect((await runCli(['tenant', 'create', '--slug', 'socket-co'], env)).code).toBe(0)
  const key = (await runCli(['api-key', 'create', '--tenant', 'socket-co', '--name', 'k', '--scopes', 'scenarios:read,scenarios:write'], env)).json.key as string
  svc = await spawnService(['bun', 'server/main.ts'], env)
  const created = await call(svc.url, 'POST', '/v1/scenarios', { token: key, body: { name: 'Over the socket' } })
  expect(created.status).toBe(201)
  const read = await call(svc.url, 'GET', `/v1/scenarios/${created.body.id}`, { token: key })
  expect(read.status).toBe(200)
  expect(read.body.name).toBe('Over the socket')
  // the service's own sessions are socket sessions: PostgreSQL reports no client address for them
  const sql = postgresClient(database.url!, { max: 1, onnotice: () => {} })
  try {
    const sessions = await sql<{ client_addr: string | null }[]>`
      select client_addr from pg_stat_activity where datname = current_database() and application_name = 'svc'`
    expect(sessions.length).toBeGreaterThan(0)
    expect(sessions.every((s) => s.client_addr === null)).toBe(true)
  } finally {
    await sql.end()
  }
})
