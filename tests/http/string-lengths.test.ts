/**
 * String lengths are counted in the document's unit: `maxLength`/`minLength` are JSON Schema
 * characters (Unicode code points), so an emoji (two UTF-16 code units) is one character. Over HTTP:
 * a body member (validator), a query value (readQuery) and a rule checked by hand (the email of an
 * embed mint) accept exactly the limit in emoji and refuse one more with a pointer. The patched
 * validator is also checked directly for minLength, which no request field isolates.
 */
import { afterAll, beforeAll, expect, test, setDefaultTimeout } from 'bun:test'
import { Type } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Value } from '@sinclair/typebox/value'
import { call, problemOf, startApp, type TestApp } from '../helpers/app'
import { charLength } from '../../server/http/json-text'

setDefaultTimeout(120_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const EMOJI = '\u{1F600}' // one character, two UTF-16 code units
let app: TestApp
let key: string

beforeAll(async () => {
  app = await startApp({ runner: false })
  const t = await app.tenant()
  key = await app.apiKey(t.id, ['scenarios:read', 'scenarios:write', 'question_sets:read', 'embed:mint'])
})
afterAll(() => app?.stop())

const pointers = (r: Awaited<ReturnType<typeof call>>) => (problemOf(r).errors ?? []).map((e) => e.pointer)

test('a body member: a 500-character name of 500 emoji is accepted and stored whole; 501 is 422 at /name', async () => {
  const name = EMOJI.repeat(500)
  expect(name.length).toBe(1000) // what the validator used to count
  const ok = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name } })
  expect(ok.status).toBe(201)
  expect((await call(app.url, 'GET', `/v1/scenarios/${ok.body.id}`, { token: key })).body.name).toBe(name)
  const over = await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: EMOJI.repeat(501) } })
  expect(over.status).toBe(422)
  expect(pointers(over)).toEqual(['/name'])
  // Mixed text counts the same way: 499 letters and one emoji are 500 characters.
  expect((await call(app.url, 'POST', '/v1/scenarios', { token: key, body: { name: `${'a'.repeat(499)}${EMOJI}` } })).status).toBe(201)
})

test('a query value: 64 emoji meet the vertical filter maxLength 64; 65 are 422 at /vertical', async () => {
  const ok = await call(app.url, 'GET', `/v1/question-sets?vertical=${encodeURIComponent(EMOJI.repeat(64))}`, { token: key })
  expect(ok.status).toBe(200)
  expect(ok.body.items).toEqual([])
  const over = await call(app.url, 'GET', `/v1/question-sets?vertical=${encodeURIComponent(EMOJI.repeat(65))}`, { token: key })
  expect(over.status).toBe(422)
  expect(pointers(over)).toEqual(['/vertical'])
})

test('a length checked by hand (an email address, at most 254 characters) counts characters too', async () => {
  const address = (n: number) => `${EMOJI.repeat(n - '@example.com'.length)}@example.com`
  expect(charLength(address(254))).toBe(254)
  const mint = (subject_email: string) => call(app.url, 'POST', '/v1/embed/handoffs', {
    token: key, body: { scenario_id: crypto.randomUUID(), host_origin: 'https://host.example', subject_email },
  })
  expect((await mint(address(254))).status).toBe(201)
  const over = await mint(address(255))
  expect(over.status).toBe(422)
  expect(pointers(over)).toEqual(['/subject_email'])
})

test('the validator (compiled and interpreted) counts code points for maxLength and minLength', () => {
  const schema = Type.String({ minLength: 2, maxLength: 3 })
  const compiled = TypeCompiler.Compile(schema)
  const cases: [string, boolean][] = [
    [EMOJI, false], // 1 character, 2 code units
    [EMOJI.repeat(2), true],
    [EMOJI.repeat(3), true], // 6 code units
    [EMOJI.repeat(4), false],
    ['abc', true],
    ['abcd', false],
    [`a${EMOJI}b`, true],
  ]
  for (const [value, ok] of cases) {
    expect(compiled.Check(value), value).toBe(ok)
    expect(Value.Check(schema, value), value).toBe(ok)
    expect([...compiled.Errors(value)].length === 0, value).toBe(ok)
  }
  expect(charLength(`${EMOJI}a\uD800`)).toBe(3) // an unpaired surrogate is one (it is refused elsewhere)
})
