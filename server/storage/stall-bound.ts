/**
 * A blob store read bounded in time: a store that answered its headers and then stalls (an S3
 * endpoint that never sends the body) must not hold a download open for ever. The first bytes are
 * awaited before the response is answered, so a store that sends nothing within the bound is a 503
 * the client can retry; once bytes flow, a pause longer than the bound ends the body with an error
 * (the connection closes short of Content-Length, which every client reads as a failed download).
 */
import { ProblemError } from '../http/problem'

type Chunk = Awaited<ReturnType<ReadableStreamDefaultReader<Uint8Array>['read']>>

/**
 * Reads the first chunk of `stream` within `stallMs` (503 `unavailable` with Retry-After when it
 * does not come) and returns a stream of the whole body whose every later chunk must also come
 * within `stallMs`.
 */
export async function withinStallBound(stream: ReadableStream<Uint8Array>, stallMs: number): Promise<ReadableStream<Uint8Array>> {
  const reader = stream.getReader()
  const next = () => new Promise<Chunk>((resolve, reject) => {
    const timer = setTimeout(() => reject(new StallError()), stallMs)
    reader.read().then((r) => { clearTimeout(timer); resolve(r) }, (e) => { clearTimeout(timer); reject(e) })
  })
  let first: Chunk
  try {
    first = await next()
  } catch (e) {
    await reader.cancel().catch(() => {})
    if (e instanceof StallError) throw new ProblemError('unavailable', 'The document store did not send the bytes in time; retry shortly.', { retryAfterSeconds: 5 })
    throw e
  }
  let pending: Chunk | undefined = first
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const r = pending ?? await next()
        pending = undefined
        if (r.done) controller.close()
        else controller.enqueue(r.value)
      } catch (e) {
        await reader.cancel().catch(() => {})
        controller.error(e)
      }
    },
    cancel(reason) { return reader.cancel(reason) },
  })
}

class StallError extends Error {
  constructor() { super('the blob store stalled') }
}
