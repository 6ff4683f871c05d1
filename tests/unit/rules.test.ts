import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { acceptAnswer, evaluateRule, judgesAbsence, parseRule, RuleError, ruleProblem } from '../../server/evaluation/rules'
import { checkedChoice, parseDate, parseNumber, parseValue, readAnswerValue } from '../../server/evaluation/values'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

describe('accept rules: parsing', () => {
  test('comparisons, ranges, one-of, presence and boolean structure parse to the expected tree', () => {
    expect(parseRule('value >= 1000000')).toEqual({ op: 'compare', comparator: '>=', literal: { type: 'number', value: '1000000' } })
    expect(parseRule('VALUE BETWEEN 0 AND 0.35')).toEqual({ op: 'between', low: { type: 'number', value: '0' }, high: { type: 'number', value: '0.35' } })
    expect(parseRule("value in ['LLC', \"Corporation\"]")).toEqual({ op: 'in', literals: [{ type: 'text', value: 'LLC' }, { type: 'text', value: 'Corporation' }] })
    expect(parseRule('present')).toEqual({ op: 'present' })
    expect(parseRule('absent or value < 3 and not value = 1')).toEqual({
      op: 'or', args: [{ op: 'absent' }, { op: 'and', args: [
        { op: 'compare', comparator: '<', literal: { type: 'number', value: '3' } },
        { op: 'not', arg: { op: 'compare', comparator: '=', literal: { type: 'number', value: '1' } } },
      ] }],
    })
    expect(parseRule('(value > 2024-01-01) and value == 2024-06-30')).toMatchObject({ op: 'and' })
    expect(parseRule('value = false')).toEqual({ op: 'compare', comparator: '=', literal: { type: 'boolean', value: false } })
  })

  test('syntax errors name what is wrong and the column', () => {
    const cases: [string, RegExp][] = [
      ['', /must not be empty/],
      ['value >', /expected a value .*at the end|expected a value at the end/],
      ['value >= 10 or', /expected "value"/],
      ['value ~ 3', /unexpected character "~" \(at column 7\)/],
      ['value between 1 5', /expected "and", found "5" \(at column 17\)/],
      ['value in [1, 2', /expected "\]" at the end/],
      ['revenue > 5', /expected "value", "present", "absent", "not" or "\(", found "revenue" \(at column 1\)/],
      ['value > 5 5', /unexpected "5" \(at column 11\)/],
      ['value = 2024-02-30', /not a calendar date/],
      ['x'.repeat(501), /at most 500 characters/],
    ]
    for (const [source, message] of cases) {
      let error: unknown
      try { parseRule(source) } catch (e) { error = e }
      expect(error, source).toBeInstanceOf(RuleError)
      expect((error as Error).message, source).toMatch(message)
    }
  })

  test('type checks against the answer type', () => {
    expect(ruleProblem('value >= 1000000', 'number')).toBeNull()
    expect(ruleProblem("value >= 'a lot'", 'number')).toMatch(/text literal "a lot" cannot be compared with a number answer/)
    expect(ruleProblem('value > 3', 'text')).toMatch(/">" does not apply to a text answer/)
    expect(ruleProblem('value between 1 and 2', 'boolean')).toMatch(/"between" does not apply/)
    expect(ruleProblem('value = true', 'boolean')).toBeNull()
    expect(ruleProblem('value = 1', 'boolean')).toMatch(/number literal/)
    expect(ruleProblem("value >= '2023-01-01'", 'date')).toBeNull()
    expect(ruleProblem('value >= 2023-01-01', 'date')).toBeNull()
    expect(ruleProblem("value contains 'clean'", 'text')).toBeNull()
    expect(ruleProblem("value contains 'clean'", 'number')).toMatch(/contains" applies to text answers only/)
    expect(ruleProblem('value >', 'number')).toMatch(/at the end/)
  })
})

describe('accept rules: evaluation', () => {
  test('numbers compare exactly as decimals, never as floats', () => {
    expect(acceptAnswer('value >= 1000000', '1250000.00', 'number')).toBe(true)
    expect(acceptAnswer('value >= 1000000', '999999.99', 'number')).toBe(false)
    expect(acceptAnswer('value = 0.3', '0.30', 'number')).toBe(true)
    expect(acceptAnswer('value < 0.30000000000000001', '0.3', 'number')).toBe(true)
    expect(acceptAnswer('value between -10 and 10', '-10.00', 'number')).toBe(true)
    expect(acceptAnswer('value between -10 and 10', '10.01', 'number')).toBe(false)
    expect(acceptAnswer('value in [1, 2, 3]', '2.0', 'number')).toBe(true)
  })

  test('dates, booleans and text', () => {
    expect(acceptAnswer('value >= 2023-01-01', '2024-03-31', 'date')).toBe(true)
    expect(acceptAnswer("value < '2023-01-01'", '2024-03-31', 'date')).toBe(false)
    expect(acceptAnswer('value = false', false, 'boolean')).toBe(true)
    expect(acceptAnswer('value != false', false, 'boolean')).toBe(false)
    expect(acceptAnswer("value in ['llc', 'corporation']", ' LLC ', 'text')).toBe(true)
    expect(acceptAnswer("value contains 'NO LITIGATION'", 'There is no litigation pending', 'text')).toBe(true)
    expect(acceptAnswer("value = 'x' or value = 'y'", 'z', 'text')).toBe(false)
  })

  test('a missing value: judged only by rules that speak about presence', () => {
    expect(acceptAnswer('value >= 1', null, 'number')).toBeUndefined()
    expect(acceptAnswer('present', null, 'number')).toBe(false)
    expect(acceptAnswer('present', '3', 'number')).toBe(true)
    expect(acceptAnswer('absent or value < 3', null, 'number')).toBe(true)
    expect(acceptAnswer('absent or value < 3', '5', 'number')).toBe(false)
    expect(judgesAbsence(parseRule('not (present)'))).toBe(true)
    expect(evaluateRule(parseRule('not value > 3'), null, 'number')).toBe(true)
  })
})

describe('typed values', () => {
  test('money and exact numbers become decimal strings with their scale', () => {
    expect(parseNumber('1,250,000.00')).toEqual({ value: '1250000.00' })
    expect(parseNumber('$1,250,000')).toEqual({ value: '1250000', unit: 'USD' })
    expect(parseNumber('USD 980.50')).toEqual({ value: '980.50', unit: 'USD' })
    expect(parseNumber('(35.00)')).toEqual({ value: '-35.00' })
    expect(parseNumber('-0.00')).toEqual({ value: '0.00' })
    expect(parseNumber('12.5%')).toEqual({ value: '12.5', unit: '%' })
    expect(parseNumber('007')).toEqual({ value: '7' })
    expect(parseNumber('1,25,000')).toBeNull()
    // A decimal comma where the number has no English reading (a European document's figures).
    expect(parseNumber('1.234,50')).toEqual({ value: '1234.50' })
    expect(parseNumber('-2.500,00')).toEqual({ value: '-2500.00' })
    expect(parseNumber('EUR 1.234.567,89')).toEqual({ value: '1234567.89', unit: 'EUR' })
    expect(parseNumber('12,50 \u20ac')).toEqual({ value: '12.50', unit: 'EUR' })
    expect(parseNumber('1 234,50')).toEqual({ value: '1234.50' })
    expect(parseNumber('1.234.567')).toEqual({ value: '1234567' })
    // Both readings possible: the English one, as before; two numbers side by side: none.
    expect(parseNumber('1,500')).toEqual({ value: '1500' })
    expect(parseNumber('1.500')).toEqual({ value: '1.500' })
    expect(parseNumber('1 234')).toBeNull()
    // Money with three digits after one dot: 1500 in Europe, 1.5 in English; read as neither.
    expect(parseNumber('\u20ac 1.500')).toBeNull()
    expect(parseNumber('1.500 EUR')).toBeNull()
    expect(parseNumber('$1.50')).toEqual({ value: '1.50', unit: 'USD' })
    expect(parseNumber('1.500%')).toEqual({ value: '1.500', unit: '%' })
    expect(parseNumber('1.234,5.6')).toBeNull()
    expect(parseNumber('12 34')).toBeNull()
    expect(parseValue('12 years')).toEqual({ type: 'number', value: '12', unit: 'years' })
  })

  test('a row of check boxes is the option it picks, or stays text when none is ticked or which box is whose is unclear', () => {
    expect(parseValue('\u2612 Yes \u2610 No')).toEqual({ type: 'boolean', value: true })
    expect(parseValue('\u2610 Yes \u2612 No')).toEqual({ type: 'boolean', value: false })
    expect(parseValue('Yes \u2610 No \u2612')).toEqual({ type: 'boolean', value: false })
    expect(parseValue('\u25cb Basic \u25c9 Full cover')).toEqual({ type: 'text', value: 'Full cover' })
    expect(checkedChoice('\u2612 Fire \u2610 Flood \u2611 Theft')).toBe('Fire, Theft')
    expect(checkedChoice('\u2610 Yes \u2610 No')).toBe('')
    expect(parseValue('\u2610 Yes \u2610 No')).toEqual({ type: 'text', value: '\u2610 Yes \u2610 No' })
    // A box before the first option and another after the last: whose box is which is unclear.
    expect(checkedChoice('\u2612 Yes \u2610 No \u2610')).toBeNull()
    expect(checkedChoice('Yes \u2612 No')).toBeNull()
    expect(checkedChoice('Sprinklered')).toBeNull()
    // Boxes typed as text, as plain-text and scanned forms write them: a row of two or more.
    expect(parseValue('[X] Yes [ ] No')).toEqual({ type: 'boolean', value: true })
    expect(parseValue('Yes [ ]  No [x]')).toEqual({ type: 'boolean', value: false })
    expect(parseValue('see note [x]')).toEqual({ type: 'text', value: 'see note [x]' })
    expect(parseValue('[ ] Yes [ ] No')).toEqual({ type: 'text', value: '[ ] Yes [ ] No' })
  })

  test('dates only when unambiguous; booleans; text otherwise', () => {
    expect(parseDate('2024-01-31')).toBe('2024-01-31')
    expect(parseDate('January 31, 2024')).toBe('2024-01-31')
    expect(parseDate('31 Jan 2024')).toBe('2024-01-31')
    expect(parseDate('2024-02-30')).toBeNull()
    expect(parseDate('01/02/2024')).toBeNull()
    expect(parseValue('No')).toEqual({ type: 'boolean', value: false })
    expect(parseValue('Acme Holdings LLC')).toEqual({ type: 'text', value: 'Acme Holdings LLC' })
    expect(readAnswerValue(1250000.5, 'number')).toBe('1250000.5')
    expect(readAnswerValue('yes', 'boolean')).toBe(true)
    expect(readAnswerValue('soon', 'date')).toBeNull()
  })
})
