/**
 * The notification surface of the API in one plugin: subscriptions, their deliveries (with
 * redeliver) and the webhook signing secret.
 */
import { Elysia } from 'elysia'
import type { AppDeps } from '../deps'
import { subscriptionRoutes } from './subscriptions'
import { deliveryRoutes } from './deliveries'
import { signingSecretRoutes } from './signing-secret'

/** Every notification route. */
export function notificationRoutes(deps: AppDeps) {
  return new Elysia({ name: 'notifications' })
    .use(subscriptionRoutes(deps))
    .use(deliveryRoutes(deps))
    .use(signingSecretRoutes(deps))
}
