/**
 * Workspace roles and API-key scopes: the closed sets the access rules, the API-key and identity
 * shapes and the CLI all name.
 */

/** Workspace roles, most to least powerful. */
export const ROLES = ['admin', 'reviewer', 'underwriter', 'viewer'] as const
/** A workspace role. */
export type Role = (typeof ROLES)[number]

/** API-key scopes of the operating contract (`embed:mint` grants nothing else). */
export const SCOPES = [
  'scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write',
  'settings:write', 'notifications:write', 'embed:mint', 'billing:read', 'billing:write',
] as const
/** An API-key scope. */
export type Scope = (typeof SCOPES)[number]
