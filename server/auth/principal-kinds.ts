/**
 * The kinds of caller a credential resolves to (the Principal type), apart from how they are
 * resolved (principal.ts), so the stores and the break-glass check can name a caller without
 * importing the authenticator.
 */
import type { Role, Scope } from '../../schemas/access'
import type { KeyEnvironment } from './api-key-format'

/** Workspace state carried by every workspace principal. */
export interface InWorkspace { tenantId: string; tenantStatus: 'active' | 'suspended' }

/** A resolved caller. */
export type Principal =
  | (InWorkspace & { kind: 'user'; userId: string; sub: string; role: Role; operator: boolean })
  | (InWorkspace & { kind: 'api_key'; keyId: string; scopes: readonly Scope[]; environment: KeyEnvironment })
  | (InWorkspace & { kind: 'embed'; sessionId: string; scenarioId: string; expiresAt: Date })
  /**
   * A platform operator reading a workspace under an approved, open break-glass request
   * (`requestId`); only GET routes marked `breakGlass` admit it, and each such read is audited.
   */
  | (InWorkspace & { kind: 'break_glass'; sub: string; requestId: string; expiresAt: Date })
  | { kind: 'operator'; sub: string; organization?: string }
  /** A valid user token of someone who is no member yet; only routes with `invitee` admit it. */
  | { kind: 'person'; sub: string; organization?: string }
