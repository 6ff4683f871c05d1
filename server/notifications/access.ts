/**
 * Who may read and write the notification surface (spec Authentication 8): writing a subscription
 * or the signing secret needs an admin or reviewer user or an API key with notifications:write;
 * reading is open to every member, and to keys of any data scope.
 */
import { ANY_ROLE, type AccessRule } from '../auth/access'

/** Creating or modifying a subscription, a delivery or the signing secret. */
export const NOTIFICATIONS_WRITE: AccessRule = { roles: ['admin', 'reviewer'], scopes: ['notifications:write'] }

/** Reading subscriptions, deliveries and the secret's metadata. */
export const NOTIFICATIONS_READ: AccessRule = {
  roles: ANY_ROLE,
  scopes: ['scenarios:read', 'scenarios:write', 'question_sets:read', 'question_sets:write', 'notifications:write'],
}
