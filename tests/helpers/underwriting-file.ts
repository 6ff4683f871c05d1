/**
 * A commercial underwriting file of nine documents of eight-plus types, generated in the run and
 * uploaded under file names that say nothing (scan0001.pdf, IMG_4411.pdf, Document (3).pdf, ...):
 * an application form, a bank statement, a pay stub, a tax return, a passport, a rent roll, a loss
 * run, an insurance declarations page and an email. Each figure is known, so tests can grade the
 * answers; `closingOffBy` moves the statement's closing balance to make its reconciliation fail.
 */
import { pdfSample, type SampleFile } from './samples'

/** Options of the file. */
export interface FileOptions { closingBalance?: string }

const utf8 = (s: string) => new TextEncoder().encode(s) as SampleFile['bytes']

/** A random, meaningless file name with the given extension. */
export function randomName(ext: string): string {
  const forms = [() => `scan${String(Math.floor(Math.random() * 10_000)).padStart(4, '0')}`, () => `IMG_${1000 + Math.floor(Math.random() * 9000)}`, () => `Document (${1 + Math.floor(Math.random() * 20)})`, () => `upload-${crypto.randomUUID().slice(0, 8)}`]
  return `${forms[Math.floor(Math.random() * forms.length)]!()}-${crypto.randomUUID().slice(0, 4)}.${ext}`
}

/** The bank statement PDF (its closing balance reconciles unless told otherwise). */
export async function bankStatementPdf(opts: FileOptions = {}): Promise<SampleFile> {
  return {
    filename: randomName('pdf'), contentType: 'application/pdf', bytes: await pdfSample([[
      'First Example Bank', 'Bank Statement', 'Account holder: Acme Holdings LLC', 'Account number: 000123456',
      'Statement period: January 1, 2026 to January 31, 2026', 'Opening balance: 48,200.00', 'Total credits: 20,500.50',
      'Total debits: 31,000.00', `Closing balance: ${opts.closingBalance ?? '37,700.50'}`,
    ]]),
  }
}

/** Every document of the file with the type it must be given. */
export async function underwritingFile(opts: FileOptions = {}): Promise<{ file: SampleFile; type: string }[]> {
  const pdf = async (pages: string[][]): Promise<SampleFile> => ({ filename: randomName('pdf'), contentType: 'application/pdf', bytes: await pdfSample(pages) })
  const csv = (rows: string[]): SampleFile => ({ filename: randomName('csv'), contentType: 'text/csv', bytes: utf8(rows.join('\n') + '\n') })
  return [
    { type: 'application_form', file: await pdf([
      ['Commercial Loan Application', 'Applicant: Acme Holdings LLC', 'Business name: Acme Holdings LLC', 'Loan amount: 1,250,000.00', 'Loan to value: 0.62',
        'Purpose: Purchase of second production facility', 'Years in business: 12 years', 'Gross revenue (FY2025): 2,400,000.00', 'Net income: 310,000.00'],
      ['Section B: declarations', 'Prior bankruptcy: No', 'Date of application: March 3, 2026', 'Applicant signature: J. Smith', 'Collateral: Warehouse at 12 Dock Road'],
    ]) },
    { type: 'bank_statement', file: await bankStatementPdf(opts) },
    { type: 'pay_stub', file: await pdf([[
      'Earnings Statement', 'Employee: Jane Smith', 'Employer: Acme Holdings LLC', 'Pay period: February 1, 2026 to February 15, 2026', 'Pay date: February 20, 2026',
      'Gross pay: 5,000.00', 'Federal income tax: 600.00', 'Total deductions: 1,150.00', 'Net pay: 3,850.00',
    ]]) },
    { type: 'tax_return', file: await pdf([[
      'Form 1120 U.S. Corporation Income Tax Return', 'Tax year: 2025', 'Name: Acme Holdings LLC', 'Employer identification number: 12-3456789',
      'Total income: 2,350,000.00', 'Taxable income: 402,000.00', 'Total tax: 84,420.00',
    ]]) },
    { type: 'identity_document', file: await pdf([[
      'Passport', 'Surname: Smith', 'Given names: Jane Alice', 'Nationality: Canadian', 'Date of birth: 14 May 1980', 'Passport number: XK1234567', 'Date of expiry: 2031-05-13',
    ]]) },
    { type: 'rent_roll', file: csv(['Unit,Tenant,Lease end,Monthly rent', '1A,Bistro Co,2027-06-30,4500.00', '1B,Print Shop,2026-12-31,3200.00', '2A,Vacant,,0.00', '2B,Law Office,2028-03-31,5100.00', 'Total,,,12800.00']) },
    { type: 'loss_run', file: csv(['Policy year,Claims,Incurred,Paid,Reserve', '2022,1,4000.00,4000.00,0.00', '2023,0,0.00,0.00,0.00', '2024,3,18250.00,12000.00,6250.00', 'Total,4,22250.00,16000.00,6250.00']) },
    { type: 'insurance_declaration', file: await pdf([[
      'Commercial Property Policy Declarations', 'Named insured: Acme Holdings LLC', 'Policy number: CP-7788123', 'Policy period: April 1, 2026 to April 1, 2027',
      'Insurer: Example Mutual Insurance Company', 'Limit of liability: 2,000,000.00', 'Deductible: 10,000.00', 'Total premium: 18,400.00',
    ]]) },
    { type: 'email', file: { filename: randomName('eml'), contentType: 'message/rfc822', bytes: utf8([
      'From: broker@example.test', 'To: underwriting@example.test', 'Subject: Acme Holdings - additional information', 'Date: Tue, 3 Mar 2026 10:00:00 +0000',
      'Content-Type: text/plain; charset=utf-8', '',
      'Hello,', '', 'The borrower expects to hire 40 additional staff once the new facility opens.', '', 'The broker fee is 1.5% of the loan amount, paid at closing.', '', 'Regards, the broker', '',
    ].join('\r\n')) } },
  ]
}

/** A question's known answer: its value (and the quote it must cite), or not in the file. */
export type Expect = { value: string | boolean; quote?: string } | 'absent'
/** A question of the file with its known answer. */
export interface Graded { key: string; text: string; answer_type: 'text' | 'number' | 'date' | 'boolean'; fact_path?: string; expect: Expect; kind?: 'row' | 'synonym' }

const fact = (key: string, fact_path: string, answer_type: Graded['answer_type'], expect: Expect, kind?: Graded['kind']): Graded => ({ key, text: `Fact ${key}`, answer_type, fact_path, expect, ...(kind ? { kind } : {}) })
const free = (key: string, text: string, expect: Expect): Graded => ({ key, text, answer_type: 'text', expect })

/** 44 questions over the file: 22 with a fact_path, 22 free text; 9 are not in the file. */
export const QUESTIONS: Graded[] = [
  fact('loan_amount', 'loan_amount', 'number', { value: '1250000.00', quote: 'Loan amount: 1,250,000.00' }),
  fact('annual_revenue', 'annual_revenue', 'number', { value: '2400000.00', quote: 'Gross revenue (FY2025): 2,400,000.00' }, 'synonym'),
  fact('revenue_list', 'revenue|total_sales', 'number', { value: '2400000.00', quote: 'Gross revenue (FY2025): 2,400,000.00' }, 'synonym'),
  fact('net_income', 'net_income', 'number', { value: '310000.00' }),
  fact('ending_balance', 'bank_statement.ending_balance', 'number', { value: '37700.50', quote: 'Closing balance: 37,700.50' }, 'synonym'),
  fact('opening_balance', 'bank_statement.opening_balance', 'number', { value: '48200.00' }),
  fact('gross_pay', 'pay_stub.gross_pay', 'number', { value: '5000.00' }),
  fact('net_pay', 'pay_stub.net_pay', 'number', { value: '3850.00' }),
  fact('taxable_income', 'tax_return.taxable_income', 'number', { value: '402000.00' }),
  fact('date_of_birth', 'identity_document.date_of_birth', 'date', { value: '1980-05-14' }),
  fact('dob', 'dob', 'date', { value: '1980-05-14', quote: 'Date of birth: 14 May 1980' }, 'synonym'),
  fact('claims_2024', 'loss_run.claims[policy_year=2024]', 'number', { value: '3', quote: '2024 | 3 | 18250.00 | 12000.00 | 6250.00' }, 'row'),
  fact('incurred_2022', 'loss_run.incurred[policy_year=2022]', 'number', { value: '4000.00', quote: '2022 | 1 | 4000.00 | 4000.00 | 0.00' }, 'row'),
  fact('rent_1b', 'rent_roll.monthly_rent[unit=1B]', 'number', { value: '3200.00', quote: '1B | Print Shop | 2026-12-31 | 3200.00' }, 'row'),
  fact('rent_total', 'rent_roll.monthly_rent.total', 'number', { value: '12800.00' }),
  fact('policy_number', 'insurance_declaration.policy_number', 'text', { value: 'CP-7788123' }),
  fact('premium', 'premium', 'number', { value: '18400.00', quote: 'Total premium: 18,400.00' }, 'synonym'),
  fact('prior_bankruptcy', 'prior_bankruptcy', 'boolean', { value: false }),
  fact('years_in_business', 'years_in_business', 'number', { value: '12' }),
  fact('credit_score', 'credit_score', 'number', 'absent'),
  fact('claims_2019', 'loss_run.claims[policy_year=2019]', 'number', 'absent'),
  fact('bonus', 'pay_stub.bonus', 'number', 'absent'),

  free('purpose', 'What is the purpose of the loan?', { value: 'Purchase of second production facility', quote: 'Purpose: Purchase of second production facility' }),
  free('named_insured', 'Who is the named insured?', { value: 'Acme Holdings LLC', quote: 'Named insured: Acme Holdings LLC' }),
  free('policy_no_text', 'What is the policy number?', { value: 'CP-7788123' }),
  free('deductible', 'What is the deductible?', { value: '10,000.00' }),
  free('nationality', 'What is the nationality of the passport holder?', { value: 'Canadian' }),
  free('ein', 'What is the employer identification number?', { value: '12-3456789' }),
  free('pay_date', 'What is the pay date?', { value: 'February 20, 2026' }),
  free('collateral', 'What collateral is offered?', { value: 'Warehouse at 12 Dock Road' }),
  free('insurer', 'Who is the insurer?', { value: 'Example Mutual Insurance Company' }),
  free('statement_period', 'What is the statement period?', { value: 'January 1, 2026 to January 31, 2026' }),
  free('staff', 'How many additional staff does the borrower expect to hire?', { value: '40 additional staff' }),
  free('broker_fee', 'What is the broker fee?', { value: '1.5%' }),
  free('account_number', 'What is the account number?', { value: '000123456' }),
  free('total_tax', 'What is the total tax?', { value: '84,420.00' }),
  free('limit', 'What is the limit of liability?', { value: '2,000,000.00' }),
  free('surname', 'What is the surname on the passport?', { value: 'Smith' }),
  free('expiry', 'What is the date of expiry of the passport?', { value: '2031-05-13' }),
  free('credit_score_text', "What is the applicant's credit score?", 'absent'),
  free('guarantor', 'Who is the guarantor of the loan?', 'absent'),
  free('environment', 'What environmental hazards were found at the site?', 'absent'),
  free('dscr', 'What is the debt service coverage ratio?', 'absent'),
  free('auditor', 'Which auditor signed the financial statements?', 'absent'),
]
