/**
 * Figures that check themselves: the arithmetic a document's type allows, run on its mined facts and
 * tables at ingestion, each result recorded on the document (`checks`). Exact decimals (big.js):
 * one cent off fails.
 *
 *  - bank statement: `balance_reconciles`: opening balance + credits - debits = closing balance
 *    (from `Label: value` lines; debits count as positive whichever sign they are written with);
 *    `running_balance`: in a table with a balance column and an amount (or credit and debit)
 *    column, each row's balance = the previous row's balance + its amount (+ credit - debit).
 *  - rent roll, loss run: `rows_add_to_total`: each number column of a table with a total row
 *    ("Total", "Subtotal", "Grand total") adds up to that row.
 *  - pay stub: `net_pay`: gross pay - total deductions = net pay.
 *
 * A check whose figures are not all in the document is not run (nothing is recorded for it).
 */
import Big from 'big.js'
import { mineCase, type CaseBlock, type Fact } from './facts'
import type { DocumentType } from './document-types'

/** The result of one check. */
export interface CheckResult {
  name: 'balance_reconciles' | 'running_balance' | 'rows_add_to_total' | 'net_pay'
  passed: boolean
  /** The arithmetic checked, in words. */
  rule: string
  /** What the other figures give. */
  expected: string
  /** What the document states. */
  found: string
  /** found - expected ("0" when passed). */
  difference: string
  /** Where the stated figure is. */
  page: number
  block_id: string
  /** One line a reader can check by hand. */
  detail: string
}

/** Groups a decimal string's integer digits by three ("1250000.00" -> "1,250,000.00"). */
export function grouped(decimal: string): string {
  const [int, frac] = decimal.split('.')
  const neg = int!.startsWith('-')
  const digits = (neg ? int!.slice(1) : int!).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return `${neg ? '-' : ''}${digits}${frac !== undefined ? `.${frac}` : ''}`
}

const scaleOf = (...values: string[]) => Math.max(0, ...values.map((v) => (v.split('.')[1] ?? '').length))
const cells = (b: CaseBlock) => b.text.split(' | ').map((c) => c.trim())
const isTotal = (b: CaseBlock) => /^(sub\s*|grand\s*)?totals?\b/i.test(cells(b).find((c) => c !== '') ?? '')
const num = (raw: string | undefined): Big | null => {
  if (raw === undefined || raw.trim() === '') return null
  const s = raw.trim().replace(/^\((.*)\)$/, '-$1').replace(/^[$€£¥]\s*/, '').replace(/^(-?)\s*[$€£¥]\s*/, '$1').replaceAll(',', '')
  return /^[-+]?\d+(\.\d+)?$/.test(s) ? new Big(s) : null
}

function result(name: CheckResult['name'], rule: string, expected: Big, stated: Big, scale: number, at: { page: number; blockId: string }, describe: string): CheckResult {
  const difference = stated.minus(expected)
  const passed = difference.eq(0)
  const e = expected.toFixed(scale)
  const f = stated.toFixed(scale)
  return {
    name, passed, rule, expected: e, found: f, difference: difference.toFixed(scale), page: at.page, block_id: at.blockId,
    detail: passed ? `${describe} = ${grouped(e)}, as stated` : `${describe} = ${grouped(e)}, but the document states ${grouped(f)} (off by ${grouped(difference.abs().toFixed(scale))})`,
  }
}

/** Runs the checks of a document's type over its blocks (one document, in reading order). */
export function runChecks(type: DocumentType | string, blocks: readonly CaseBlock[]): CheckResult[] {
  if (!['bank_statement', 'rent_roll', 'loss_run', 'pay_stub'].includes(type)) return []
  // The checks read `Label: value` facts and tables, never a column's facts (`credits.sum`): not mined.
  const { facts, tables } = mineCase(blocks, { columns: false })
  const first = (names: string[]): Fact | undefined => {
    for (const n of names) {
      const f = facts.find((x) => x.path === n && x.value.type === 'number')
      if (f) return f
    }
    return undefined
  }
  const amount = (f: Fact) => new Big(f.value.value as string)
  const out: CheckResult[] = []

  if (type === 'bank_statement') {
    const opening = first(['opening_balance', 'beginning_balance', 'previous_balance', 'balance_forward', 'starting_balance'])
    const closing = first(['closing_balance', 'ending_balance', 'new_balance', 'balance_at_end_of_period'])
    const credits = first(['total_credits', 'total_deposits', 'deposits_and_credits', 'deposits_and_other_credits', 'credits', 'deposits'])
    const debits = first(['total_debits', 'total_withdrawals', 'withdrawals_and_debits', 'withdrawals_and_other_debits', 'debits', 'withdrawals'])
    if (opening && closing && credits && debits) {
      const [o, c, cr, db] = [amount(opening), amount(closing), amount(credits), amount(debits).abs()]
      const scale = scaleOf(...[opening, closing, credits, debits].map((f) => f.value.value as string))
      out.push(result('balance_reconciles', 'opening balance + credits - debits = closing balance', o.plus(cr).minus(db), c, scale,
        { page: closing.page, blockId: closing.blockId },
        `opening balance ${grouped(o.toFixed(scale))} + credits ${grouped(cr.toFixed(scale))} - debits ${grouped(db.toFixed(scale))}`))
    }
    for (const t of tables) {
      const col = (names: string[]) => t.columns.findIndex((c) => names.includes(c))
      const bal = col(['balance', 'running_balance', 'ending_balance'])
      const amt = col(['amount', 'net_amount'])
      const cr = col(['credit', 'credits', 'deposit', 'deposits', 'deposits_credits'])
      const db = col(['debit', 'debits', 'withdrawal', 'withdrawals', 'withdrawals_debits'])
      if (bal < 0 || (amt < 0 && (cr < 0 || db < 0))) continue
      const rows = t.rows.filter((r) => !isTotal(r))
      let prev: Big | null = null
      let checked = 0
      let failed: CheckResult | null = null
      let last: CheckResult | null = null
      for (const r of rows) {
        const c = cells(r)
        const balance = num(c[bal])
        if (balance === null) continue
        const move = amt >= 0 ? num(c[amt]) : (num(c[cr]) ?? new Big(0)).minus((num(c[db]) ?? new Big(0)).abs())
        if (prev !== null && move !== null) {
          const scale = scaleOf(...[c[bal]!, amt >= 0 ? c[amt]! : c[cr] ?? '', amt >= 0 ? '' : c[db] ?? ''].map((v) => v.replaceAll(',', '')))
          const check = result('running_balance', "each row's balance = the previous balance + the row's amount", prev.plus(move), balance, scale, { page: r.page, blockId: r.id },
            `previous balance ${grouped(prev.toFixed(scale))} + ${grouped(move.toFixed(scale))}`)
          checked++
          last = check
          if (!check.passed && !failed) failed = check
        }
        prev = balance
      }
      if (checked > 0) {
        const chosen = failed ?? last!
        out.push(failed ? { ...chosen, detail: `row on page ${chosen.page}: ${chosen.detail}` } : { ...chosen, detail: `${checked} rows: each balance follows from the previous one` })
      }
    }
  }

  if (type === 'rent_roll' || type === 'loss_run') {
    for (const t of tables) {
      const total = t.rows.filter(isTotal).at(-1)
      if (!total) continue
      const body = t.rows.filter((r) => !isTotal(r))
      t.columns.forEach((name, col) => {
        if (col === 0 || !name) return
        const stated = num(cells(total)[col])
        if (stated === null) return
        const values = body.map((r) => cells(r)[col] ?? '')
        if (values.some((v) => v !== '' && num(v) === null)) return
        const sum = values.reduce((acc, v) => acc.plus(num(v) ?? 0), new Big(0))
        const scale = scaleOf(cells(total)[col]!.replaceAll(',', ''), ...values.map((v) => v.replaceAll(',', '')))
        out.push(result('rows_add_to_total', `the rows of ${name} add up to the total row`, sum, stated, scale, { page: total.page, blockId: total.id },
          `${name}: ${body.length} rows add up`))
      })
    }
  }

  if (type === 'pay_stub') {
    const gross = first(['gross_pay', 'gross_earnings', 'total_gross', 'gross_wages', 'total_earnings', 'gross'])
    const deductions = first(['total_deductions', 'deductions'])
    const net = first(['net_pay', 'net_amount', 'net_earnings', 'take_home_pay'])
    if (gross && deductions && net) {
      const [g, d, n] = [amount(gross), amount(deductions).abs(), amount(net)]
      const scale = scaleOf(...[gross, deductions, net].map((f) => f.value.value as string))
      out.push(result('net_pay', 'gross pay - deductions = net pay', g.minus(d), n, scale, { page: net.page, blockId: net.blockId },
        `gross pay ${grouped(g.toFixed(scale))} - deductions ${grouped(d.toFixed(scale))}`))
    }
  }
  return out
}
