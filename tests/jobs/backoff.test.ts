/**
 * The webhook retry schedule of the spec: 8 attempts, first gap SVC_WEBHOOK_RETRY_INITIAL_MS
 * (1 minute by default), coefficient 2.4, cap 4 h never reached (last gap about 3.2 h), about
 * 5.5 h in all, small jitter that never makes a gap shorter than the previous one.
 */
import { describe, expect, test, setDefaultTimeout } from 'bun:test'
import { DELIVERY_BACKOFF_CAP_MS, DELIVERY_MAX_ATTEMPTS, deliveryBackoffMs, jobBackoffMs } from '../../jobs/backoff'
import { WEBHOOK_CONNECT_TIMEOUT_MS, WEBHOOK_RESPONSE_READ_BYTES, WEBHOOK_TOTAL_TIMEOUT_MS } from '../../jobs/webhook-sender'
import { loadConfig } from '../../server/config'

// Embedded-database apps start slowly on a busy machine; the preload's default does not reach every file.
setDefaultTimeout(60_000)

const mid = () => 0.5 // no jitter
const low = () => 0 // -10 %
const high = () => 0.999999 // +10 %

describe('delivery back-off', () => {
  test('the default schedule: 7 gaps from 1 minute growing 2.4x, last about 3.2 h, about 5.5 h in all', () => {
    const initial = loadConfig({}).webhookRetryInitialMs
    expect(initial).toBe(60_000)
    expect(DELIVERY_MAX_ATTEMPTS).toBe(8)
    const gaps = Array.from({ length: DELIVERY_MAX_ATTEMPTS - 1 }, (_, i) => deliveryBackoffMs(i + 1, initial, mid))
    expect(gaps).toEqual([60_000, 144_000, 345_600, 829_440, 1_990_656, 4_777_574, 11_466_179])
    expect(gaps.at(-1)! / 3_600_000).toBeCloseTo(3.19, 2)
    const total = gaps.reduce((a, b) => a + b, 0) / 3_600_000
    expect(total).toBeGreaterThan(5.3)
    expect(total).toBeLessThan(5.7)
    expect(Math.max(...gaps)).toBeLessThan(DELIVERY_BACKOFF_CAP_MS)
  })

  test('jitter is at most 10 % and gaps always grow, even high jitter followed by low', () => {
    for (let n = 1; n < 7; n++) {
      const base = 60_000 * 2.4 ** (n - 1)
      expect(deliveryBackoffMs(n, 60_000, low)).toBe(Math.round(base * 0.9))
      expect(deliveryBackoffMs(n, 60_000, high)).toBeLessThanOrEqual(Math.round(base * 1.1))
      expect(deliveryBackoffMs(n + 1, 60_000, low)).toBeGreaterThan(deliveryBackoffMs(n, 60_000, high))
    }
  })

  test('a long first gap hits the 4 h cap', () => {
    expect(deliveryBackoffMs(7, 3_600_000, mid)).toBe(DELIVERY_BACKOFF_CAP_MS)
  })

  test('the configured first gap scales the whole schedule', () => {
    expect(loadConfig({ SVC_WEBHOOK_RETRY_INITIAL_MS: '50' }).webhookRetryInitialMs).toBe(50)
    expect(deliveryBackoffMs(1, 50, mid)).toBe(50)
    expect(deliveryBackoffMs(3, 50, mid)).toBe(288)
  })

  test('the spec limits of one send', () => {
    expect(WEBHOOK_CONNECT_TIMEOUT_MS).toBe(5_000)
    expect(WEBHOOK_TOTAL_TIMEOUT_MS).toBe(10_000)
    expect(WEBHOOK_RESPONSE_READ_BYTES).toBe(16 * 1024)
  })

  test('failed jobs back off from 1 s doubling to at most 5 minutes', () => {
    expect(jobBackoffMs(1, mid)).toBe(1000)
    expect(jobBackoffMs(4, mid)).toBe(8000)
    expect(jobBackoffMs(30, mid)).toBe(300_000)
  })
})
