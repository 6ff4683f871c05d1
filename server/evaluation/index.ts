/**
 * The evaluation mechanism's public face: the answer engines, the case context they read, the
 * model client, accept rules, facts, retrieval and the decision. Other parts of the service (the
 * evaluation job, question authoring and generation runs) import from here.
 */
import type { Config } from '../config'
import { builtinEngine, type AnswerEngine } from './engine'
import { modelEngine } from './model-engine'

export { builtinEngine, buildCaseContext, judge, type AnswerEngine, type CaseContext, type EngineAnswer, type EvidenceRef, type Question } from './engine'
export { modelEngine, passagesFor, questionMessages, readReply, checkCitations, findQuote } from './model-engine'
export { chatJson, ModelOutageError, ModelResponseError, parseJsonObject, defaultBackoffMs, type ChatMessage, type ChatOptions, type ChatResult, type ModelSettings } from './model-client'
export { parseRule, ruleProblem, evaluateRule, acceptAnswer, judgesAbsence, RuleError, type Rule } from './rules'
export { mineFacts, indexFacts, slug, documentNamespace, type CaseBlock, type Fact, type FactIndex } from './facts'
export { buildBlockIndex, type BlockIndex, type Hit } from './retrieval'
export { decide, OUTCOMES, CRITICALITIES, type Decision, type DecisionReason, type Outcome, type Criticality } from './decision'
export { ANSWER_TYPES, parseValue, parseNumber, parseDate, parseBoolean, readAnswerValue, toAnswerValue, type AnswerType, type AnswerValue, type TypedValue } from './values'

/**
 * The engine the configuration selects: model-backed when SVC_MODEL_URL is set (with its name, key,
 * timeout and retries), the built-in deterministic engine otherwise.
 */
export function createEngine(config: Pick<Config, 'modelUrl' | 'modelName' | 'modelApiKey' | 'modelTimeoutMs' | 'modelMaxRetries'>): AnswerEngine {
  if (!config.modelUrl) return builtinEngine
  return modelEngine({
    modelUrl: config.modelUrl,
    modelName: config.modelName,
    modelApiKey: config.modelApiKey,
    modelTimeoutMs: config.modelTimeoutMs,
    modelMaxRetries: config.modelMaxRetries,
  })
}
