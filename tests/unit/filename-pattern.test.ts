/**
 * The file-name rule is stated once in the OpenAPI document (FILENAME_PATTERN, a Unicode pattern) and
 * checked by the routes (filenameProblem, which names the offending character). The two must agree on
 * every code point: each one is tried alone, between letters, and as the only non-blank character, so
 * neither can refuse what the other accepts.
 */
import { expect, test, setDefaultTimeout } from 'bun:test'
import { FILENAME_PATTERN } from '../../schemas/document'
import { filenameProblem } from '../../server/documents/filenames'

setDefaultTimeout(60_000)

const pattern = new RegExp(FILENAME_PATTERN, 'u')

test('the stated pattern and the route check agree on every Unicode code point', () => {
  const disagreements: string[] = []
  for (let cp = 0; cp <= 0x10ffff; cp++) {
    if (cp >= 0xd800 && cp <= 0xdfff) continue // lone surrogates are not characters of a JSON string
    const ch = String.fromCodePoint(cp)
    for (const name of [`a${ch}b`, ch, ` ${ch} `]) {
      if (pattern.test(name) !== (filenameProblem(name) === null)) disagreements.push(`U+${cp.toString(16).toUpperCase()} in ${JSON.stringify(name)}`)
    }
  }
  expect(disagreements.slice(0, 20)).toEqual([])
})

test('blank names, separators and the named families are refused by both', () => {
  for (const name of ['', ' ', '\u3000', 'a/b', 'a\\b', 'invoice\u202Efdp.exe', 'a\u200Bb', 'a\u2028b', 'a\u{E0041}b', 'a\u00ADb']) {
    expect(pattern.test(name)).toBe(false)
    expect(filenameProblem(name)).not.toBeNull()
  }
  for (const name of ['Kontoauszug März.pdf', '申告書.pdf', 'résumé (1).docx', '\u{1F600}.png', 'a b']) {
    expect(pattern.test(name)).toBe(true)
    expect(filenameProblem(name)).toBeNull()
  }
})
