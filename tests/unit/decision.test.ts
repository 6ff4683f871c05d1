import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { decide, type JudgedAnswer } from '../../server/evaluation/decision'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

const a = (questionKey: string, criticality: JudgedAnswer['criticality'], status: JudgedAnswer['status'], accepted?: boolean): JudgedAnswer =>
  ({ questionKey, criticality, status, ...(accepted === undefined ? {} : { accepted }) })

describe('decision', () => {
  test('everything accepted or minor: approve with no reasons', () => {
    expect(decide([a('rev', 'critical', 'answered', true), a('tone', 'minor', 'answered', false), a('x', 'minor', 'not_found')])).toEqual({ outcome: 'approve', reasons: [] })
    expect(decide([])).toEqual({ outcome: 'approve', reasons: [] })
  })

  test('a major question without a rule verdict or not found does not refer', () => {
    expect(decide([a('m', 'major', 'not_found'), a('m2', 'major', 'answered')]).outcome).toBe('approve')
  })

  test('a critical rule failure declines', () => {
    const d = decide([a('rev', 'critical', 'answered', false), a('ok', 'critical', 'answered', true)])
    expect(d).toEqual({ outcome: 'decline', reasons: [{ question_key: 'rev', criticality: 'critical', finding: 'rule_failed', effect: 'decline', message: 'critical question rev fails its accept rule' }] })
  })

  test('a critical not_found or a major failure refers', () => {
    expect(decide([a('id', 'critical', 'not_found')])).toEqual({ outcome: 'refer', reasons: [{ question_key: 'id', criticality: 'critical', finding: 'not_found', effect: 'refer', message: 'critical question id was not found in the documents' }] })
    expect(decide([a('dscr', 'major', 'answered', false)]).outcome).toBe('refer')
  })

  test('a critical not_found judged by a presence rule follows the rule, not the absence', () => {
    expect(decide([a('bk', 'critical', 'not_found', true)]).outcome).toBe('approve')
    expect(decide([a('bk', 'critical', 'not_found', false)]).outcome).toBe('decline')
  })

  test('reasons: every contributing question, declines first, then question order', () => {
    const d = decide([a('m1', 'major', 'answered', false), a('c1', 'critical', 'not_found'), a('c2', 'critical', 'answered', false), a('n', 'minor', 'answered', false)])
    expect(d.outcome).toBe('decline')
    expect(d.reasons.map((r) => [r.question_key, r.effect])).toEqual([['c2', 'decline'], ['m1', 'refer'], ['c1', 'refer']])
  })
})
