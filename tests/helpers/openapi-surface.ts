/**
 * The /v1 surface of an OpenAPI document, as the freeze test compares it (Versioning 2: nothing
 * inside /v1 is removed or renamed): each operation with its operationId, its parameters, its
 * response statuses with the fields of each body (nested, `[]` for array items), the enum members
 * sent to clients, and the error types it can answer. The workspace surface holds every operation a
 * workspace credential (a role, a key scope, an invitee, an embed session) or nobody can call; the
 * operator surface holds the operator-only ones (Versioning 5: outside the /v1 promise), frozen in a
 * snapshot of their own under a looser policy (see tests/http/openapi-contract.test.ts).
 * `breaks(frozen, live)` lists every item of the frozen surface the live one lost; additions are not breaks.
 */

type Schema = Record<string, any>

/** One operation's surface. */
export interface OperationSurface {
  operationId: string
  parameters: string[]
  responses: Record<string, { fields: string[]; enums: Record<string, string[]> }>
  errors: string[]
}

/** The whole surface: operations keyed `METHOD /path`. */
export interface Surface { version: string; operations: Record<string, OperationSurface> }

/** Whether only an operator may call an operation: no role, no scope, no invitee, no embed session, not public. */
export function operatorOnly(access: Schema | undefined): boolean {
  if (!access?.operator || access.public || access.invitee || access.embed) return false
  return (access.roles ?? []).length === 0 && (access.scopes ?? []).length === 0
}

/** Reads the workspace surface (or, with `which: 'operator'`, the operator-only one) of an OpenAPI document. */
export function surfaceOf(doc: Schema, which: 'workspace' | 'operator' = 'workspace'): Surface {
  const resolve = (s: Schema | undefined): Schema | undefined => {
    let node = s
    for (let i = 0; node?.$ref && i < 20; i++) node = doc.components.schemas[String(node.$ref).split('/').pop()!]
    return node
  }
  const walk = (s: Schema | undefined, at: string, fields: Set<string>, enums: Record<string, string[]>, depth = 0) => {
    const node = resolve(s)
    if (!node || depth > 12) return
    if (Array.isArray(node.enum)) enums[at || '(body)'] = [...new Set([...(enums[at || '(body)'] ?? []), ...node.enum.map(String)])].sort()
    for (const member of [...(node.anyOf ?? []), ...(node.oneOf ?? []), ...(node.allOf ?? [])]) walk(member, at, fields, enums, depth + 1)
    if (node.items) walk(node.items, `${at}[]`, fields, enums, depth + 1)
    for (const [name, prop] of Object.entries<Schema>(node.properties ?? {})) {
      const path = at ? `${at}.${name}` : name
      fields.add(path)
      walk(prop, path, fields, enums, depth + 1)
    }
  }
  const operations: Record<string, OperationSurface> = {}
  for (const [path, methods] of Object.entries<Record<string, Schema>>(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (operatorOnly(op['x-svc-access']) !== (which === 'operator')) continue
      const parameters = (op.parameters ?? []).map((p: Schema) => {
        const param = p.$ref ? doc.components.parameters[String(p.$ref).split('/').pop()!] : p
        return `${param.in}:${param.name}`
      }).sort()
      const responses: OperationSurface['responses'] = {}
      const errors = new Set<string>()
      for (const [status, response] of Object.entries<Schema>(op.responses ?? {})) {
        for (const type of response['x-svc-problem-types'] ?? []) errors.add(type)
        const fields = new Set<string>()
        const enums: Record<string, string[]> = {}
        if (status.startsWith('2')) for (const media of Object.values<Schema>(response.content ?? {})) walk(media.schema, '', fields, enums)
        responses[status] = { fields: [...fields].sort(), enums }
      }
      operations[`${method.toUpperCase()} ${path}`] = { operationId: op.operationId, parameters, responses, errors: [...errors].sort() }
    }
  }
  return { version: doc.info.version, operations }
}

/** Every item of `frozen` that `live` removed or renamed, one line each; empty when compatible. */
export function breaks(frozen: Surface, live: Surface): string[] {
  const out: string[] = []
  if (Number(live.version.split('.')[0]) !== Number(frozen.version.split('.')[0])) out.push(`info.version ${live.version} is not of major ${frozen.version}`)
  for (const [key, was] of Object.entries(frozen.operations)) {
    const now = live.operations[key]
    if (!now) { out.push(`${key}: operation removed`); continue }
    if (now.operationId !== was.operationId) out.push(`${key}: operationId ${was.operationId} renamed to ${now.operationId}`)
    for (const p of was.parameters) if (!now.parameters.includes(p)) out.push(`${key}: parameter ${p} removed`)
    for (const e of was.errors) if (!now.errors.includes(e)) out.push(`${key}: error type ${e} removed`)
    for (const [status, response] of Object.entries(was.responses)) {
      const r = now.responses[status]
      if (!r) { out.push(`${key}: response ${status} removed`); continue }
      for (const f of response.fields) if (!r.fields.includes(f)) out.push(`${key} ${status}: field ${f} removed`)
      for (const [field, members] of Object.entries(response.enums)) {
        for (const m of members) if (!(r.enums[field] ?? []).includes(m)) out.push(`${key} ${status}: enum member ${field}=${m} removed`)
      }
    }
  }
  return out
}
