/**
 * Back-off schedules: the webhook retry schedule of the spec (8 attempts, first gap
 * SVC_WEBHOOK_RETRY_INITIAL_MS, coefficient 2.4, cap 4 h, small jitter) and the default schedule of
 * jobs whose handler threw.
 */

/** Attempts of one delivery cycle before it dead-letters. */
export const DELIVERY_MAX_ATTEMPTS = 8
/** Growth of each gap over the previous one. */
export const DELIVERY_BACKOFF_COEFFICIENT = 2.4
/** Largest gap (never reached with the default first gap: the last is about 3.2 h). */
export const DELIVERY_BACKOFF_CAP_MS = 4 * 3_600_000
/** Jitter: each gap is scaled by a factor in [1 - JITTER, 1 + JITTER]. Small enough that gaps always grow. */
export const DELIVERY_BACKOFF_JITTER = 0.1

/**
 * The gap before the next delivery attempt after `consumed` counted attempts of the cycle (1..7):
 * initial * 2.4^(consumed-1), capped at 4 h, with +-10 % jitter. With the default minute the gaps
 * are about 1 m, 2.4 m, 5.8 m, 13.8 m, 33 m, 80 m and 3.2 h: about 5.5 h in all.
 */
export function deliveryBackoffMs(consumed: number, initialMs: number, random: () => number = Math.random): number {
  const base = Math.min(initialMs * DELIVERY_BACKOFF_COEFFICIENT ** Math.max(0, consumed - 1), DELIVERY_BACKOFF_CAP_MS)
  return Math.max(1, Math.round(base * (1 + (random() * 2 - 1) * DELIVERY_BACKOFF_JITTER)))
}

/** The default gap before re-running a job whose handler threw `attempts` times: 1 s doubling, at most 5 min, +-10 %. */
export function jobBackoffMs(attempts: number, random: () => number = Math.random): number {
  const base = Math.min(1000 * 2 ** Math.max(0, attempts - 1), 300_000)
  return Math.round(base * (1 + (random() * 2 - 1) * 0.1))
}
