/**
 * Checks a version's questions beyond their JSON schema: fact paths parse (fact-path.ts), accept rules parse and fit the answer type
 * (a format error of the field: 422 with a pointer per rule), an accept rule comes with a fact_path,
 * and keys are unique within the version (domain rules: 422 whose detail names the field).
 */
import { problems, type FieldError } from '../http/problem'
import { ruleProblem } from '../evaluation/rules'
import { factPathProblem } from '../evaluation/fact-path'
import type { Question } from '../../schemas/question-set'

/** The problems of a list of questions as field errors and domain-rule details; empty when valid. */
export function questionProblems(questions: readonly Question[]): { fields: FieldError[]; rules: string[] } {
  const fields: FieldError[] = []
  const rules: string[] = []
  const seen = new Map<string, number>()
  questions.forEach((q, i) => {
    if (q.fact_path !== undefined) {
      const problem = factPathProblem(q.fact_path)
      if (problem) fields.push({ pointer: `/questions/${i}/fact_path`, message: problem })
    }
    if (q.accept !== undefined) {
      const problem = ruleProblem(q.accept, q.answer_type)
      if (problem) fields.push({ pointer: `/questions/${i}/accept`, message: problem })
      else if (q.fact_path === undefined) rules.push(`questions/${i}/accept needs questions/${i}/fact_path: a rule judges a fact.`)
    }
    const first = seen.get(q.key)
    if (first !== undefined) rules.push(`questions/${i}/key "${q.key}" repeats questions/${first}/key; keys are unique within a version.`)
    else seen.set(q.key, i)
  })
  return { fields, rules }
}

/** Throws the 422 for invalid questions (field errors first, then the first domain rule). */
export function assertQuestions(questions: readonly Question[]): void {
  const { fields, rules } = questionProblems(questions)
  if (fields.length) throw problems.schema(fields)
  if (rules.length) throw problems.rule(rules[0]!)
}

/** Keeps only the members a question has (optional ones absent when unset), in a stable order. */
export function normaliseQuestions(questions: readonly Question[]): Question[] {
  return questions.map((q) => ({
    key: q.key,
    text: q.text,
    criticality: q.criticality,
    answer_type: q.answer_type,
    ...(q.guidance !== undefined ? { guidance: q.guidance } : {}),
    ...(q.fact_path !== undefined ? { fact_path: q.fact_path } : {}),
    ...(q.accept !== undefined ? { accept: q.accept } : {}),
  }))
}
