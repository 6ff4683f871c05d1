// The PostgreSQL client's internal queue (patches/postgres@3.4.9.patch). Unpatched, a queue that never
// drains keeps every slot it ever handed out and remove() scans them all: a pool under steady load
// (the connection queues are shifted and searched on every query) got slower with every query,
// from ~27k to ~9k queries per second within 40 seconds on this project's 2-core machines.
import { expect, test, setDefaultTimeout } from 'bun:test'
// @ts-expect-error the package ships no types for its internals
import QueueModule from '../../node_modules/postgres/src/queue.js'

setDefaultTimeout(60_000) // file-scoped in Bun 1.4: the preload only reaches the first file

interface Queue<T> { length: number; push(x: T): T; shift(): T | undefined; remove(x: T): T | null }
const Queue = QueueModule as <T>(initial?: T[]) => Queue<T>

test('a queue that never drains stays as cheap to search as a short one', () => {
  const q = Queue<object>()
  const keep = { keep: true }
  q.push(keep)
  // A million items pass through while the queue never empties (one item always waits).
  for (let i = 0; i < 1_000_000; i++) {
    q.push({ i })
    q.shift()
  }
  expect(q.length).toBe(1)
  const absent = {}
  const started = performance.now()
  for (let i = 0; i < 10_000; i++) if (q.remove(absent) !== null) throw new Error("found an absent item")
  // Unpatched: 10,000 scans over a million consumed slots (seconds); patched: a few microseconds.
  expect(performance.now() - started).toBeLessThan(100)
})

test('order and remove() are unchanged across the compaction', () => {
  const q = Queue<number>()
  const out: number[] = []
  let next = 0
  for (let round = 0; round < 5_000; round++) {
    q.push(next++)
    q.push(next++)
    out.push(q.shift()!)
  }
  // 5,000 still queued, in order, after many compactions
  expect(q.length).toBe(5_000)
  expect(out).toEqual(Array.from({ length: 5_000 }, (_, i) => i))
  expect(q.remove(7_000)).toBe(7_000)
  expect(q.remove(7_000)).toBeNull()
  expect(q.remove(1)).toBeNull() // consumed long ago
  const rest: number[] = []
  while (q.length) rest.push(q.shift()!)
  expect(rest).toEqual(Array.from({ length: 5_000 }, (_, i) => 5_000 + i).filter((n) => n !== 7_000))
  expect(q.shift()).toBeUndefined()
})
